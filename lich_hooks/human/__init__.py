"""click and everything only people run: imports base/ and hook/'s pure rules, never the reverse."""
