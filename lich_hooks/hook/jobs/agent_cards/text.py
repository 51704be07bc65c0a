"""Every string agent cards show (docs/agent-cards.md): `<key>_person` is a deny's systemMessage,
`<key>` its reason, `<key>_context` its additionalContext; English is the fallback; values are
inserted with `str.format` as they are."""

from __future__ import annotations

EN: dict[str, str] = {
    # toasts: the native agent runs, the user reads why
    "toast": 'lich: running "{description}" as a Claude Code subagent: {why}',
    "why_cards_off_worker": (
        "lich keeps this worker's subagents native (subagent cards are off for this session)"
    ),
    "why_too_large": "the task is {size} bytes, over lich's limit of {limit} bytes",
    "why_bin_unusable": "LICH_BIN ({path}) is not an executable file",
    "why_launch": "could not run lich ({error})",
    "why_timeout": "lich open did not finish within {seconds} s",
    "why_no_json": "lich open failed: {detail}",
    "why_no_json_detail": "it printed no JSON (exit {code})",
    "why_not_delivered": 'lich opened "{label}" but the task did not reach it: {detail}',
    "why_not_delivered_detail": "lich gave no delivery (exit {code})",
    # where the worker works
    "where_isolated": "on branch {branch} in {path}, not in this checkout",
    "where_shared": "in this same checkout ({path}), editing the same files you are",
    "done_isolated": "on branch {branch} in {path}",
    "done_shared": "in this same checkout ({path})",
    "on_branch": " (on branch {branch})",
    # denies: the person reads the systemMessage, then the reason; the context is the model's only
    "pending_person": (
        'lich is running this task as card "{label}"; its report will come back here.'
    ),
    "pending": "Not an error: lich runs this task instead of a Claude Code subagent.",
    "pending_context": (
        'The Agent call above went to lich instead: the task runs in lich session "{label}"'
        " (roster name {name}, which is also the id TaskStop takes). It works {where}. Its full"
        " report will arrive at this prompt by itself as a [lich] note, so do not redo the task"
        " and do not wait for a task notification. To reach the worker, use send_to_session or"
        " lich send (SendMessage cannot reach it); wait_for_answer also works."
    ),
    "stop_hint": (
        " If TaskStop answers that it has no task with that id (Claude Code checks its own"
        " tasks before any hook sees the call), run `{stop}` to stop the worker instead."
    ),
    "unanswered_note": (
        " Its first turn ended without an answer, usually because a command is still"
        " running in its background; the report still arrives as a [lich] note."
    ),
    "answered_person": 'lich ran this task as card "{label}", and its report is back.',
    "answered": "Not an error: lich ran this task instead of a Claude Code subagent.",
    "answered_context": (
        'The Agent call above went to lich instead: lich ran the task in session "{label}"'
        " (roster name {name}), and it has already reported. The work is {where}. To reach the"
        " session, use send_to_session or lich send (SendMessage cannot reach it). Its"
        " report:\n\n{answer}"
    ),
    "never_reached": (
        'The task never reached lich card "{label}"{on_branch} ({status}): open the card in'
        " lich to see why."
    ),
    "unknown_status": (
        'lich answered "{status}" about card "{label}"{on_branch}: open the card in lich.'
    ),
    "interrupted": (
        "Interrupted while lich was opening a card for this task: a lich card{on_branch} may"
        " already be running it."
    ),
    "interrupted_context": (
        "If one is, its report arrives at this prompt as a [lich] note, so check before"
        " running the task again."
    ),
    # TaskStop
    "stop_shared_person": 'lich closed card "{label}".',
    "stop_shared": (
        'Successfully stopped task: {id} ({description}). lich closed its session "{label}".'
    ),
    "stop_isolated_person": 'lich stopped card "{label}"; the card and its worktree stay.',
    "stop_isolated": (
        "Successfully stopped task: {id} ({description}). lich stopped the turn of session"
        ' "{label}"; its card and its worktree on branch {branch} stay for the user.'
    ),
    "stop_refused": "lich did not stop task {id} ({description}): {reason}",
    "stop_refused_detail": "exit {code}",
    # status line
    "workers_one": "lich: {count} worker",
    "workers_many": "lich: {count} workers",
}

PT_BR: dict[str, str] = {
    "toast": 'lich: "{description}" vai rodar como subagente do Claude Code: {why}',
    "why_cards_off_worker": (
        "o lich mantém nativos os subagentes deste worker (os cards de subagente estão"
        " desligados nesta sessão)"
    ),
    "why_too_large": "a tarefa tem {size} bytes, acima do limite de {limit} bytes do lich",
    "why_bin_unusable": "LICH_BIN ({path}) não é um arquivo executável",
    "why_launch": "não foi possível executar o lich ({error})",
    "why_timeout": "lich open não terminou em {seconds} s",
    "why_no_json": "lich open falhou: {detail}",
    "why_no_json_detail": "não imprimiu JSON (código de saída {code})",
    "why_not_delivered": 'o lich abriu "{label}", mas a tarefa não chegou lá: {detail}',
    "why_not_delivered_detail": "o lich não informou a entrega (código de saída {code})",
    "where_isolated": "no branch {branch} em {path}, não neste checkout",
    "where_shared": "neste mesmo checkout ({path}), editando os mesmos arquivos que você",
    "done_isolated": "no branch {branch} em {path}",
    "done_shared": "neste mesmo checkout ({path})",
    "on_branch": " (no branch {branch})",
    "pending_person": (
        'O lich está rodando esta tarefa no card "{label}"; o relatório volta para cá.'
    ),
    "pending": "Não é um erro: o lich roda esta tarefa no lugar de um subagente do Claude Code.",
    "pending_context": (
        'A chamada Agent acima foi para o lich: a tarefa roda na sessão do lich "{label}"'
        " (nome no roster {name}, que também é o id que TaskStop recebe). Ela trabalha"
        " {where}. O relatório completo chega sozinho a este prompt como uma nota [lich];"
        " portanto não refaça a tarefa nem espere uma notificação de tarefa. Para falar com o"
        " worker, use send_to_session ou lich send (SendMessage não o alcança); wait_for_answer"
        " também funciona."
    ),
    "stop_hint": (
        " Se TaskStop responder que não há tarefa com esse id (o Claude Code confere as"
        " próprias tarefas antes de qualquer hook ver a chamada), rode `{stop}` para parar"
        " o worker."
    ),
    "unanswered_note": (
        " O primeiro turno terminou sem resposta, em geral porque um comando continua"
        " rodando em segundo plano; o relatório ainda chega como nota [lich]."
    ),
    "answered_person": 'O lich rodou esta tarefa no card "{label}", e o relatório já voltou.',
    "answered": "Não é um erro: o lich rodou esta tarefa no lugar de um subagente do Claude Code.",
    "answered_context": (
        'A chamada Agent acima foi para o lich: ele executou a tarefa na sessão "{label}"'
        " (nome no roster {name}), que já entregou o relatório. O trabalho está {where}. Para"
        " falar com a sessão, use send_to_session ou lich send (SendMessage não a alcança). O"
        " relatório:\n\n{answer}"
    ),
    "never_reached": (
        'A tarefa nunca chegou ao card do lich "{label}"{on_branch} ({status}): abra o card'
        " no lich para ver o motivo."
    ),
    "unknown_status": (
        'O lich respondeu "{status}" sobre o card "{label}"{on_branch}: abra o card no lich.'
    ),
    "interrupted": (
        "Interrompido enquanto o lich abria um card para esta tarefa: um card do"
        " lich{on_branch} talvez já a esteja rodando."
    ),
    "interrupted_context": (
        "Se estiver, o relatório chega a este prompt como nota [lich]; então confira antes de"
        " executar a tarefa de novo."
    ),
    "stop_shared_person": 'O lich fechou o card "{label}".',
    "stop_shared": (
        'Successfully stopped task: {id} ({description}). O lich fechou a sessão "{label}".'
    ),
    "stop_isolated_person": 'O lich parou o card "{label}"; o card e a worktree ficam.',
    "stop_isolated": (
        "Successfully stopped task: {id} ({description}). O lich interrompeu o turno da"
        ' sessão "{label}"; o card e a worktree no branch {branch} ficam para o usuário.'
    ),
    "stop_refused": "O lich não parou a tarefa {id} ({description}): {reason}",
    "stop_refused_detail": "código de saída {code}",
    "workers_one": "lich: {count} worker",
    "workers_many": "lich: {count} workers",
}

ZH_CN: dict[str, str] = {
    "toast": "lich：“{description}”将作为 Claude Code 子代理运行：{why}",
    "why_cards_off_worker": "lich 让此 worker 的子代理保持原生运行（此会话已关闭子代理卡片）",
    "why_too_large": "任务为 {size} 字节，超过 lich 的 {limit} 字节上限",
    "why_bin_unusable": "LICH_BIN（{path}）不是可执行文件",
    "why_launch": "无法运行 lich（{error}）",
    "why_timeout": "lich open 未在 {seconds} 秒内完成",
    "why_no_json": "lich open 失败：{detail}",
    "why_no_json_detail": "没有输出 JSON（退出码 {code}）",
    "why_not_delivered": "lich 打开了“{label}”，但任务没有送达：{detail}",
    "why_not_delivered_detail": "lich 没有给出送达结果（退出码 {code}）",
    "where_isolated": "在 {path} 的分支 {branch} 上工作，而不是在当前工作目录中",
    "where_shared": "在同一个工作目录（{path}）中工作，和你编辑的是同一批文件",
    "done_isolated": "在 {path} 的分支 {branch} 上",
    "done_shared": "在同一个工作目录（{path}）中",
    "on_branch": "（分支 {branch}）",
    "pending_person": "lich 正在以卡片“{label}”运行此任务，报告会回到这里。",
    "pending": "这不是错误：此任务由 lich 运行，而不是 Claude Code 子代理。",
    "pending_context": (
        "上面的 Agent 调用已交给 lich：任务正在 lich 会话“{label}”中运行"
        "（花名册名称 {name}，也是 TaskStop 使用的 id）。它{where}。"
        "完整报告会自动以 [lich] 备注的形式送到此提示符，因此不要重做此任务，"
        "也不要等待任务通知。要联系该 worker，请使用 send_to_session 或 lich send"
        "（SendMessage 无法联系到它）；wait_for_answer 同样可用。"
    ),
    "stop_hint": (
        "如果 TaskStop 回答没有这个 id 的任务（Claude Code 会在任何 hook 看到调用之前先检查"
        "它自己的任务），请改为运行 `{stop}` 来停止该 worker。"
    ),
    "unanswered_note": (
        "它的第一轮没有给出回答就结束了，通常是因为后台仍有命令在运行；报告仍会以 [lich] 备注送达。"
    ),
    "answered_person": "lich 已以卡片“{label}”运行此任务，报告已经回来了。",
    "answered": "这不是错误：此任务已由 lich 运行，而不是 Claude Code 子代理。",
    "answered_context": (
        "上面的 Agent 调用已交给 lich：lich 已在会话“{label}”（花名册名称 {name}）中完成此任务，"
        "并已提交报告。工作成果{where}。要联系该会话，请使用 send_to_session 或 lich send"
        "（SendMessage 无法联系到它）。报告如下：\n\n{answer}"
    ),
    "never_reached": (
        "任务从未送达 lich 卡片“{label}”{on_branch}（{status}）：请在 lich 中打开该卡片查看原因。"
    ),
    "unknown_status": "lich 对卡片“{label}”{on_branch}的回答是“{status}”：请在 lich 中打开该卡片。",
    "interrupted": "lich 正在为此任务打开卡片时被中断：某个 lich 卡片{on_branch}可能已经在运行它。",
    "interrupted_context": (
        "如果是这样，它的报告会以 [lich] 备注送到此提示符，因此再次执行任务前请先确认。"
    ),
    "stop_shared_person": "lich 已关闭卡片“{label}”。",
    "stop_shared": "Successfully stopped task: {id} ({description})。lich 已关闭其会话“{label}”。",
    "stop_isolated_person": "lich 已停止卡片“{label}”，卡片和 worktree 保留。",
    "stop_isolated": (
        "Successfully stopped task: {id} ({description})。lich 已停止会话“{label}”的当前轮次；"
        "它的卡片和分支 {branch} 上的 worktree 保留给用户。"
    ),
    "stop_refused": "lich 没有停止任务 {id}（{description}）：{reason}",
    "stop_refused_detail": "退出码 {code}",
    "workers_one": "lich：{count} 个 worker",
    "workers_many": "lich：{count} 个 worker",
}

ES: dict[str, str] = {
    "toast": 'lich: "{description}" se ejecutará como subagente de Claude Code: {why}',
    "why_cards_off_worker": (
        "lich mantiene nativos los subagentes de este worker (las tarjetas de subagente"
        " están desactivadas en esta sesión)"
    ),
    "why_too_large": "la tarea tiene {size} bytes, más que el límite de {limit} bytes de lich",
    "why_bin_unusable": "LICH_BIN ({path}) no es un archivo ejecutable",
    "why_launch": "no se pudo ejecutar lich ({error})",
    "why_timeout": "lich open no terminó en {seconds} s",
    "why_no_json": "lich open falló: {detail}",
    "why_no_json_detail": "no imprimió JSON (código de salida {code})",
    "why_not_delivered": 'lich abrió "{label}", pero la tarea no llegó: {detail}',
    "why_not_delivered_detail": "lich no informó la entrega (código de salida {code})",
    "where_isolated": "en la rama {branch} en {path}, no en este checkout",
    "where_shared": "en este mismo checkout ({path}), editando los mismos archivos que tú",
    "done_isolated": "en la rama {branch} en {path}",
    "done_shared": "en este mismo checkout ({path})",
    "on_branch": " (en la rama {branch})",
    "pending_person": 'lich ejecuta esta tarea en la tarjeta "{label}"; su informe volverá aquí.',
    "pending": "No es un error: lich ejecuta esta tarea en lugar de un subagente de Claude Code.",
    "pending_context": (
        "La llamada Agent de arriba pasó a lich: la tarea se ejecuta en la sesión de lich"
        ' "{label}" (nombre en el roster {name}, que también es el id que recibe TaskStop).'
        " Trabaja {where}. Su informe completo llegará solo a este prompt como una nota"
        " [lich], así que no rehagas la tarea ni esperes una notificación de tarea. Para"
        " hablar con el worker, usa send_to_session o lich send (SendMessage no lo alcanza);"
        " wait_for_answer también funciona."
    ),
    "stop_hint": (
        " Si TaskStop responde que no hay ninguna tarea con ese id (Claude Code revisa sus"
        " propias tareas antes de que ningún hook vea la llamada), ejecuta `{stop}` para"
        " detener al worker."
    ),
    "unanswered_note": (
        " Su primer turno terminó sin respuesta, normalmente porque sigue un comando en"
        " segundo plano; el informe igual llega como nota [lich]."
    ),
    "answered_person": 'lich ejecutó esta tarea en la tarjeta "{label}", y su informe ya volvió.',
    "answered": "No es un error: lich ejecutó esta tarea en lugar de un subagente de Claude Code.",
    "answered_context": (
        'La llamada Agent de arriba pasó a lich: lich ejecutó la tarea en la sesión "{label}"'
        " (nombre en el roster {name}), que ya entregó su informe. El trabajo está {where}."
        " Para hablar con la sesión, usa send_to_session o lich send (SendMessage no la"
        " alcanza). Su informe:\n\n{answer}"
    ),
    "never_reached": (
        'La tarea nunca llegó a la tarjeta de lich "{label}"{on_branch} ({status}): abre la'
        " tarjeta en lich para ver por qué."
    ),
    "unknown_status": (
        'lich respondió "{status}" sobre la tarjeta "{label}"{on_branch}: ábrela en lich.'
    ),
    "interrupted": (
        "Interrumpido mientras lich abría una tarjeta para esta tarea: puede que una tarjeta"
        " de lich{on_branch} ya la esté ejecutando."
    ),
    "interrupted_context": (
        "Si es así, su informe llega a este prompt como nota [lich], así que compruébalo antes"
        " de volver a ejecutar la tarea."
    ),
    "stop_shared_person": 'lich cerró la tarjeta "{label}".',
    "stop_shared": (
        'Successfully stopped task: {id} ({description}). lich cerró su sesión "{label}".'
    ),
    "stop_isolated_person": 'lich detuvo la tarjeta "{label}"; la tarjeta y su worktree se quedan.',
    "stop_isolated": (
        "Successfully stopped task: {id} ({description}). lich detuvo el turno de la sesión"
        ' "{label}"; su tarjeta y su worktree en la rama {branch} quedan para el usuario.'
    ),
    "stop_refused": "lich no detuvo la tarea {id} ({description}): {reason}",
    "stop_refused_detail": "código de salida {code}",
    "workers_one": "lich: {count} worker",
    "workers_many": "lich: {count} workers",
}

CATALOG: dict[str, dict[str, str]] = {"en": EN, "pt-BR": PT_BR, "zh-CN": ZH_CN, "es": ES}


def text(lang: str, key: str, **values: object) -> str:
    """The `key` string in `lang` (English when either is unknown), filled in."""
    template = CATALOG.get(lang, EN).get(key)
    if template is None:
        template = EN[key]
    return template.format(**values)
