#!/bin/sh
# expect_run.sh <tpb> <exit-status> <extended-regex> <tpb args...>
# Runs `tpb <args>`, shows its output, and succeeds only when the exit status
# is the expected one AND the output matches the regex.
tpb=$1 want=$2 re=$3
shift 3
out=$("$tpb" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$want" ]; then
  echo "expect_run: exit status $rc, expected $want" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq "$re"; then
  echo "expect_run: output does not match /$re/" >&2
  exit 1
fi
exit 0
