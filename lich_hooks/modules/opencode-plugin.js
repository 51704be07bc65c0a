// lich-hooks module: opencode plugin. Written by `lich-hook install opencode`, removed by `lich-hook uninstall opencode`; a re-install replaces it.
//
// Tells lich which opencode session runs in this card by running this
// installation's lich-hook detached as
//   lich-hook SessionStart opencode     with {"session_id": "<ses_...>"} on stdin,
// which decides everything about the report. What this file decides, and why here:
// - the moment and the id: a top-level session is created (`session.created`
//   without info.parentID), or a message arrives in a top-level session other
//   than the last one reported (`opencode run -c`, `-s <id>` and a TUI session
//   switch fire no creation event), so one spawn per switch, not per message;
// - whether a session is a subagent's (never reported), which only opencode can
//   say: info.parentID, asked of opencode for a session it never saw created;
// - no LICH_PORT, no spawn and no question: every registered command's guard, as
//   chat.message runs on every message and opencode awaits it.
// Never blocks, fails or slows opencode: a missing lich-hook or a failed spawn
// leaves it untouched. See docs/harnesses.md (opencode) in lich-hooks.
import { spawn } from "node:child_process"

const LICH_HOOK = @LICH_HOOK@
const ARGS = ["SessionStart", "opencode"]

function report(id) {
  const payload = JSON.stringify({ session_id: id })
  let child
  if (process.platform === "win32") {
    // Untested: no shell to feed stdin, so the payload goes through a pipe.
    child = spawn(LICH_HOOK, ARGS, { detached: true, stdio: ["pipe", "ignore", "ignore"], windowsHide: true })
    child.stdin.on("error", () => {})
    child.stdin.end(payload)
  } else {
    // The shell writes stdin itself, outside opencode's event loop: a busy loop
    // cannot starve lich-hook's bounded stdin read. Payload and path are argv,
    // never part of the script.
    const script = 'printf %s "$1" | exec "$2" "$3" "$4"'
    child = spawn("/bin/sh", ["-c", script, "sh", payload, LICH_HOOK, ...ARGS], { detached: true, stdio: "ignore" })
  }
  child.on("error", () => {})
  child.unref()
}

export const LichHooks = async ({ client }) => {
  let last
  const roots = new Set() // top-level sessions seen created in this process
  const children = new Set() // subagents' sessions (info.parentID set)
  const looking = new Set()
  const tell = (id) => {
    if (id === last || !process.env.LICH_PORT) return
    last = id
    report(id)
  }
  return {
    event: ({ event }) => {
      try {
        if (!event || event.type !== "session.created") return
        const info = event.properties && event.properties.info
        if (!info || typeof info.id !== "string" || info.id === "") return
        if (info.parentID) {
          children.add(info.id)
        } else {
          roots.add(info.id)
          tell(info.id)
        }
      } catch {}
    },
    // Awaited by opencode, so it only compares and, for a session this process did
    // not see created (`run -c`, `-s`, the TUI's list), starts a lookup it does not
    // wait for: opencode delivers events asynchronously, so a subagent's message can
    // come before its session.created; its parentID decides. No answer: no report.
    "chat.message": async (input) => {
      try {
        const id = input && input.sessionID
        if (typeof id !== "string" || id === "" || id === last || children.has(id)) return
        if (!process.env.LICH_PORT) return
        if (roots.has(id)) return tell(id)
        if (looking.has(id)) return
        looking.add(id)
        Promise.resolve(client.session.get({ path: { id } })).then(
          (result) => {
            looking.delete(id)
            const info = result && result.data
            if (!info || typeof info !== "object" || info.id !== id || info.parentID) return
            if (children.has(id)) return
            roots.add(id)
            tell(id)
          },
          () => looking.delete(id),
        )
      } catch {}
    },
  }
}
