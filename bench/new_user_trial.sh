#!/usr/bin/env bash
# A new user's first hour, from README, against a wheel installed NON-editable (issue 25 "Done when"):
#
#   bench/new_user_trial.sh [WORK_DIR]      # default /tmp/kyb-new-user; needs python3 -m venv, jq, curl
#
# Builds a wheel of this checkout, installs it with the `mcp` extra into a fresh venv (dependencies from
# the package index pip already uses), then runs README's steps as someone with an empty HOME and no
# Git identity: quick start, verify, export → import (JSONL, JSON, CSV), a two-store sync conflict and
# its review (history, get --version -1, diff agree with get), tasks with blocked_by and the ready
# queue, imports of overlapping folders and ADRs, bare `kyb`, `kyb help add`, completions, man pages,
# and kyb serve's refusals. Each check prints `ok`/`FAIL` and a line; the exit code is the failures.
# Why a script: the trial is the issue's acceptance test, and a trial done by hand cannot be repeated.
set -uo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
W="${1:-/tmp/kyb-new-user}"
rm -rf "$W" && mkdir -p "$W"
PY="${KYB_TRIAL_PYTHON:-python3}"
"$PY" -m pip wheel -q --no-deps -w "$W/wheel" "$SRC" >/dev/null 2>&1 || { echo "wheel build failed"; exit 99; }
"$PY" -m venv "$W/venv" && "$W/venv/bin/pip" install -q "$(ls "$W"/wheel/*.whl)[mcp]" >/dev/null 2>&1 \
  || { echo "install failed"; exit 99; }

for v in $(env | grep -o '^GIT_[A-Z_]*' || true); do unset "$v"; done
unset KYB_MODEL KYB_MODEL_EN KYB_STORE KYB_CONFIG KYB_OUTPUT PYTHONPATH
export HOME="$W/home" PATH="$W/venv/bin:/usr/bin:/bin"
mkdir -p "$HOME/proj" && cd "$HOME/proj" || exit 99

FAILS=0
check() {  # check "what README promises" COMMAND... : the command must succeed (a jq -e, a test, a grep)
  local what="$1"; shift
  if "$@" >/dev/null 2>&1; then echo "ok    $what"; else echo "FAIL  $what"; FAILS=$((FAILS + 1)); fi
}
q() { jq -e "$1" <<<"$2"; }  # q FILTER JSON: the filter holds on the JSON

# -- Quick start
git config --global user.name >/dev/null 2>&1 && echo "note: a git identity is set"
a=$(kyb add --key checkout-write-path --title "Checkout write path" --tags infra,checkout \
    <<< "Checkout writes go through svc-checkout on node-3, port 8080.")
check "first add creates the default store and the record" q '.action == "created"' "$a"
b=$(kyb add --key checkout-write-path --title "Checkout write path" --tags Infra,checkout,INFRA \
    <<< "Checkout writes go through svc-checkout on node-3, port 9090.")
check "second add updates; tags folded by case" q '.action == "updated"' "$b"
check "get shows the latest, tags once each" q '.body | test("9090")' "$(kyb get checkout-write-path)"
check "tags Infra,INFRA,infra are one tag" q '.tags == ["infra", "checkout"]' "$(kyb get checkout-write-path)"
check "history newest first, version 2 current" q '.versions[0].version == 2 and .versions[0].current' \
  "$(kyb history checkout-write-path)"
check "get --at HEAD~1 is the first text" q '.body | test("8080")' "$(kyb get checkout-write-path --at HEAD~1)"
check "query finds it" q '.hits[0].key == "checkout-write-path"' "$(kyb query 9090 2>/dev/null)"
check "--body '' is refused (exit 2), nothing written" bash -c '! kyb add --key e --title E --body "" && ! kyb get e'
check "bare kyb: help on stdout, exit 0" bash -c 'kyb | grep -q "^Usage: kyb"'
check "kyb help add: the help of add" bash -c 'kyb help add | grep -q "Usage: kyb add"'
check "kyb help add has an example" bash -c 'kyb help add | grep -q "Example:"'
for sh in bash zsh fish; do check "kyb completion $sh" bash -c "kyb completion $sh | grep -q _KYB_COMPLETE"; done
check "kyb man add prints the page" bash -c 'kyb man add | grep -q "^.SH NAME"'
check "man pages installed where man looks" test -f "$W/venv/share/man/man1/kyb-add.1"

# -- export → import with a verified record
echo "# Demo" > README.md
check "verify" q '.action == "verified"' "$(kyb verify checkout-write-path --source README.md)"
for fmt in jsonl json; do
  kyb export --format "$fmt" > "$W/x.$fmt"
  kyb init "$W/other-$fmt" >/dev/null
  check "import of a $fmt export: no error" kyb --store "$W/other-$fmt" import "$W/x.$fmt"
  check "the $fmt round trip keeps the verification" \
    q '.verified.source == "README.md" and .verified.current' "$(kyb --store "$W/other-$fmt" get checkout-write-path)"
done
check "CSV export says what it cannot carry" bash -c "kyb export --format csv 2>&1 >/dev/null | grep -q 'cannot carry verified'"

# -- two stores, one remote, a conflict, and its review
git init -q --bare -b main "$W/team.git"
A=(--store "$W/alice"); B=(--store "$W/bob")
kyb init "$W/alice" >/dev/null && kyb "${A[@]}" remote "$W/team.git" >/dev/null
kyb "${A[@]}" add --key svc-port --title "Service port" --body "svc listens on 8080" >/dev/null
kyb "${A[@]}" sync >/dev/null && kyb "${B[@]}" init --clone "$W/team.git" >/dev/null
kyb "${A[@]}" add --key svc-port --title "Service port" --body "svc listens on 8081 (alice)" >/dev/null
sleep 2
kyb "${B[@]}" add --key svc-port --title "Service port" --body "svc listens on 8082 (bob)" >/dev/null
kyb "${A[@]}" sync >/dev/null; s=$(kyb "${B[@]}" sync); kyb "${A[@]}" sync >/dev/null
check "sync reports the conflict, Bob's later write kept" q '.conflicts[0].type == "both_changed"' "$s"
for who in alice bob; do
  S=(--store "$W/$who")
  g=$(kyb "${S[@]}" get svc-port); h=$(kyb "${S[@]}" history svc-port)
  check "$who: get shows the kept text" q '.body | test("bob")' "$g"
  check "$who: history's current row is what get shows" q ".versions[0].current and .versions[0].sha == $(jq .sha <<<"$g")" "$h"
  check "$who: the losing row says which merge it lost" q '.versions[1].lost_merge != null and (.versions[1].current | not)' "$h"
  check "$who: get --version -1 is not the current version" \
    q ".sha != $(jq .sha <<<"$g")" "$(kyb "${S[@]}" get svc-port --version -1)"
  check "$who: diff goes from the line's previous version to the kept one" \
    q '(.diff | test("\\+svc listens on 8082")) and (.diff | test("-svc listens on 8080")) and .to.is_head' \
    "$(kyb "${S[@]}" diff svc-port)"
done

# -- tasks, dependencies, the ready queue
kyb task --key task-freeze --title "Freeze" --body "freeze" >/dev/null
kyb task --key task-cert --title "Renew cert" --priority high --body "renew" >/dev/null
kyb task --key task-ship --title "Ship" --blocked-by task-cert,task-freeze --body "ship" >/dev/null
check "get of a blocker shows what it blocks" q '.blocks == ["task-ship"]' "$(kyb get task-freeze)"
check "a cycle is refused (exit 3)" bash -c 'kyb task --key task-freeze --title Freeze --blocked-by task-ship; [ $? -eq 3 ]'
check "ready queue: blockers first, not the blocked" q '[.tasks[].key] == ["task-cert", "task-freeze"]' "$(kyb tasks --ready)"
kyb done task-cert --resolution renewed >/dev/null; kyb done task-freeze --resolution frozen >/dev/null
check "ready queue once the blockers are done" q '[.tasks[].key] == ["task-ship"]' "$(kyb tasks --ready)"

# -- imports: .txt notes, overlapping folders, ADRs
mkdir -p "$HOME/notes/sub" "$HOME/adr"
printf '# Intro\n\nHello.\n' > "$HOME/notes/intro.md"
printf 'Rotate the keys\n\nEvery 90 days rotate the signing keys.\n' > "$HOME/notes/sub/rotate.txt"
i=$(kyb import "$HOME/notes")
check ".txt imported as Markdown, first line as title" q '.skipped == []' "$i"
check ".txt title" q '.title == "Rotate the keys"' "$(kyb get sub-rotate)"
for n in 1 2; do
  check "subfolder imported again ($n): no new record, no duplicate" \
    q '.created == [] and .duplicates == [] and [.unchanged[].key] == ["sub-rotate"]' "$(kyb import "$HOME/notes/sub")"
done
printf -- '---\nstatus: Superseded\n---\n# 1. Use MySQL\n\nsuperseded by [ADR-0003](0003-use-postgres.md)\n' > "$HOME/adr/0001-use-mysql.md"
printf '# 2. Use Redis\n\nStatus: superseded by ADR-0003\n\nRedis.\n' > "$HOME/adr/0002-use-redis.md"
printf '# 3. Use Postgres\n\nStatus: Accepted\n\nPostgres.\n' > "$HOME/adr/0003-use-postgres.md"
kyb import "$HOME/adr" >/dev/null
for k in 0001-use-mysql 0002-use-redis; do
  check "ADR $k: superseded link is the key of ADR 3" q '.refs == ["0003-use-postgres"]' "$(kyb get $k --version 1)"
done

# -- retired_elsewhere: only where another record holds the same instruction
kyb add --key payments-runbook --title "Payments runbook" --body "If payments stall, restart the proxy on node-3, port 9090." >/dev/null
kyb add --key prom-node-exporter --title "Monitoring Linux host metrics with the Node Exporter" \
  --body 'Navigate to `localhost:9090/graph` in your browser to enter expressions.' >/dev/null
r=$(kyb add --key checkout-write-path --title "Checkout write path" --tags infra,checkout \
    <<< "Checkout writes go through svc-checkout on node-3, port 8080." 2>/dev/null)
check "port change names the runbook, not the Node Exporter guide" \
  q '[.retired_elsewhere[].key] == ["payments-runbook"]' "$r"
check "context --brief is brief as JSON too (< 400 bytes)" bash -c '[ "$(kyb context --brief | wc -c)" -lt 400 ]'

# -- kyb serve: refusals carry exit_code and kind
kyb serve --port 0 2>"$W/serve.err" & SERVE=$!
for _ in $(seq 50); do grep -q listening "$W/serve.err" && break; sleep 0.2; done
U="http://$(grep -o '127.0.0.1:[0-9]*' "$W/serve.err" | head -1)"
refusal() {  # refusal STATUS KIND CURL-ARGS...
  local status="$1" kind="$2"; shift 2
  local out; out=$(curl -s -w '\n%{http_code}' "$@")
  [ "$(tail -1 <<<"$out")" = "$status" ] && jq -e ".exit_code and .kind == \"$kind\" and .error" <<<"$(head -n -1 <<<"$out")"
}
check "404 carries exit_code and kind" refusal 404 not_found "$U/nope"
check "405 carries exit_code and kind" refusal 405 usage -X DELETE "$U/search"
check "421 carries exit_code and kind" refusal 421 misdirected -H 'Host: evil.example' "$U/search?q=x"
check "403 carries exit_code and kind" refusal 403 forbidden -X POST -H 'Origin: http://evil.example' \
  -H 'Content-Type: application/json' -d '{"key":"a","title":"A","body":"b"}' "$U/knowledge"
check "HTTP history agrees with the CLI" q '.versions[0].current' "$(curl -s "$U/knowledge/checkout-write-path/history")"
kill "$SERVE"; wait "$SERVE" 2>/dev/null

echo "failures: $FAILS"
exit "$FAILS"
