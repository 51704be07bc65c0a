"""Test support shared by every feature's tests."""
