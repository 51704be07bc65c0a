"""Agent cards' PreToolUse job (docs/agent-cards.md), run before every tool call: "no verdict"
imports only `eligibility`."""

from __future__ import annotations

from lich_hooks.hook.jobs.agent_cards import eligibility
from lich_hooks.hook.outcome import Context, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.hook.jobs.agent_cards.record import Worker


def run(ctx: Context) -> Outcome:
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    tool = payload.get("tool_name")
    if tool in eligibility.AGENT_TOOLS:
        return _agent(ctx, payload.data)
    if tool == eligibility.STOP_TOOL:
        return _task_stop(ctx, payload.data)
    return Outcome("not-an-agent-call")


def _agent(ctx: Context, data: dict[str, object]) -> Outcome:
    env = ctx.env
    environ = ctx.environ
    cwd = data.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None

    def interactive() -> bool:
        from lich_hooks.hook.interactive import check

        evidence = check(environ)
        ctx.log.set(interactive=evidence.why)
        return evidence.interactive

    def current_branch() -> str | None:
        from lich_hooks.hook.jobs.agent_cards import lich_process

        return lich_process.current_branch(cwd, environ)

    probes = eligibility.Probes(interactive, env.bin_is_runnable, current_branch)
    decision = eligibility.decide(data, env, probes, eligibility.agent_teams_on(environ))
    ctx.log.set(probes=probes.ran)
    if decision.kind == eligibility.NATIVE:
        return Outcome(f"native:{decision.reason}")
    if not _claimed(ctx, data):
        return Outcome("other-route-acts")
    if decision.kind == eligibility.TOAST:
        from lich_hooks.hook.jobs.agent_cards import verdict

        assert decision.why is not None
        description = _description(data)
        stdout = verdict.toast(env.lang, description, decision.why, **decision.args)
        return Outcome(f"toast:{decision.reason}", stdout=stdout)
    assert decision.call is not None and env.bin is not None and env.card is not None
    return _open(ctx, decision.call, probes, env.bin, env.card)


def _claimed(ctx: Context, data: dict[str, object]) -> bool:
    """Claude Code takes only one deny (hook/claim.py); a tool call's id never repeats."""
    from lich_hooks.hook import claim

    tool_use_id = data.get("tool_use_id")
    return claim.claim(ctx, tool_use_id if isinstance(tool_use_id, str) else None, once=True)


def _description(data: dict[str, object]) -> str:
    tool_input = data.get("tool_input")
    value = tool_input.get("description") if isinstance(tool_input, dict) else None
    return value if isinstance(value, str) else ""


def _open(
    ctx: Context, call: eligibility.Call, probes: eligibility.Probes, lich_bin: str, card: str
) -> Outcome:
    import time

    from lich_hooks.hook.jobs.agent_cards import lich_process, record, slug, verdict

    branch = base = None
    if call.isolated:
        branch = slug.branch(call.description, call.tool_use_id)
        base = probes.branch()
    argv = lich_process.open_argv(lich_bin, call, branch, base)
    ctx.log.set(open_args=lich_process.loggable(argv[1:], call.prompt))
    result = lich_process.run_open(argv, call.cwd, ctx.environ)
    ctx.log.set(open=result.kind, open_exit=result.code)
    if result.stderr_line:
        ctx.log.set(open_stderr=result.stderr_line)
    seen = verdict.context_reaches_model(ctx.environ)
    outcome = verdict.for_open(result, call, branch, ctx.env.lang, time.time(), seen)
    if outcome.worker is not None:
        recorded = record.add(ctx.environ, card, outcome.worker)
        ctx.log.set(recorded=recorded)
    return Outcome(outcome.decision, stdout=outcome.stdout)


def _task_stop(ctx: Context, data: dict[str, object]) -> Outcome:
    """Any id but a worker this card opened is Claude Code's."""
    env = ctx.env
    if env.card is None or env.bin is None:
        return Outcome("native:outside-lich")
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        return Outcome("native:no-tool-input")
    task_id = tool_input.get("task_id") or tool_input.get("shell_id")
    if not isinstance(task_id, str) or not task_id:
        return Outcome("native:no-task-id")
    from lich_hooks.hook.jobs.agent_cards import record

    worker = record.find(ctx.environ, env.card, task_id)
    if worker is None:
        return Outcome("native:not-our-task")
    if not env.bin_is_runnable():
        # An impostor `lich` first on PATH would read as "stopped": Claude Code's TaskStop answers
        return Outcome("native:lich-bin-unusable")
    if not _claimed(ctx, data):
        return Outcome("other-route-acts")
    return _stop(ctx, worker, task_id, env.bin, env.card)


def _stop(ctx: Context, worker: Worker, task_id: str, lich_bin: str, card: str) -> Outcome:
    from lich_hooks.hook.jobs.agent_cards import lich_process, record, verdict
    from lich_hooks.hook.jobs.agent_cards.text import text

    lang = ctx.env.lang
    branch = worker.get("branch") or None  # record.py checked each field's type
    label = worker.get("label", task_id)
    description = worker.get("description", "")
    taken: tuple[int, ...]
    if branch is None:
        args, taken = ["close", task_id], (0,)
    else:
        # `control` exits 2 when lich took the request.
        args, taken = ["control", task_id, "abort"], (0, 2)
    ran = lich_process.run([lich_bin, *args], ctx.environ, lich_process.CONTROL_SECONDS)
    ctx.log.set(stop=args[0], stop_exit=ran.code)
    if ran.code in taken:
        record.remove(ctx.environ, card, task_id)
        key = "stop_shared" if branch is None else "stop_isolated"
        reason = text(lang, key, id=task_id, description=description, label=label, branch=branch)
        person = text(lang, f"{key}_person", label=label)
        return Outcome(f"deny:stopped-{args[0]}", stdout=verdict.deny(reason, person=person))
    why = (
        ran.error
        or ran.stderr_line
        or lich_process.last_line(ran.stdout)
        or text(lang, "stop_refused_detail", code=ran.code)
    )
    reason = text(lang, "stop_refused", id=task_id, description=description, reason=why)
    return Outcome("deny:stop-refused", stdout=verdict.deny(reason))
