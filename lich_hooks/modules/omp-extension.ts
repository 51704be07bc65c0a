// lich-hooks module: omp extension. Written by `lich-hook install omp`, removed by `lich-hook uninstall omp`; a re-install replaces it.
//
// Tells lich which omp conversation runs in this card by running this
// installation's lich-hook detached as
//   lich-hook SessionStart omp     with {"session_id": "<omp session id>"} on stdin,
// which decides everything about the report (outside lich it exits at once).
// What this file decides, and why here:
// - the moment and the id: `session_start`, and `session_switch` (/new, /resume,
//   /fork), once per conversation; the events carry no id: it is
//   ctx.sessionManager.getSessionId(), which already names the new conversation;
// - whether the session is a subagent's (`task`, `/tan`: it runs this extension
//   again with its own session, never reported), which only omp can say: from
//   18.3.2 `ctx.agent.kind` is "sub"; before it, a subagent's transcript holds a
//   `session_init` entry (the card's conversation never does).
// Never blocks, fails or slows omp (it awaits handlers): spawn and return; a
// missing lich-hook or a failed spawn leaves omp untouched.
// See docs/harnesses.md (omp) in lich-hooks.
import type { ExtensionAPI, ExtensionContext } from "@oh-my-pi/pi-coding-agent";

const LICH_HOOK: string = @LICH_HOOK@;
const ARGS = ["SessionStart", "omp"];

function report(ctx: ExtensionContext): void {
	try {
		const sessions = ctx.sessionManager;
		// ctx.agent (omp 18.3.2+) names the agent this session serves; older omp has none
		const kind = (ctx as { agent?: { kind?: unknown } }).agent?.kind;
		if (kind === "sub") return; // a subagent
		if (kind !== "main" && sessions.getEntries().some(entry => entry.type === "session_init")) return; // a subagent
		const id = sessions.getSessionId();
		if (typeof id !== "string" || id === "") return;
		// Bun hands the bytes over itself: they arrive even when omp exits at once
		// (a node:child_process pipe did not). detached: a Ctrl+C in omp's
		// terminal does not reach it.
		Bun.spawn([LICH_HOOK, ...ARGS], {
			stdin: Buffer.from(JSON.stringify({ session_id: id })),
			stdout: "ignore",
			stderr: "ignore",
			detached: true,
		}).unref();
	} catch {
		// lich-hook missing or the spawn failed: omp carries on untouched
	}
}

export default function lichHooks(pi: ExtensionAPI): void {
	pi.on("session_start", (_event, ctx) => {
		report(ctx);
	});
	pi.on("session_switch", (_event, ctx) => {
		report(ctx);
	});
}
