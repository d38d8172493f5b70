#!/bin/sh
# test_hostile.sh - hostile submissions against the grader: does it contain them? Each one in
# tests/grading/hostile/NAME/ is a student's submission (lessons/1-broadcast/exercises.c) that
# deserves 0 points and tries to get more, to read what the grader hides, or to do damage. The
# comment at the top of each exercises.c says what it does and what "contained" means for it;
# the code most of them share is tests/grading/hostile/toolkit.c (and wrong.c), which this
# script puts in place of their "#include HOSTILE_TOOLKIT" (HOSTILE_WRONG) line.
#
#   sh tests/grading/test_hostile.sh        (from the course's root; BUILD and MAKE respected)
#   GRADE_SANDBOX=uid sh tests/grading/test_hostile.sh   (as root: the sandbox containers give)
#
# Prints "ok - ..." or "FAIL - ..." per check (a FAIL is followed by a "#" line of evidence);
# exit status 1 if any check failed. About 2 minutes. Needs python3 (JSON, the TCP listener).
# Two runs at once on one machine would see each other's markers in /tmp: run one at a time.
#
# The attacks, and the property that shows each one contained:
#   include-proc-cwd    #include "/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/
#                       solutions.c" (found with __has_include at several depths)     no points
#   include-next        the same through #include_next                                 no points
#   include-relative    "../../../../../../../lessons/..." relative to the file's own
#                       directory (__FILE__'s)                                         no points
#   include-abs-proc    "/proc/self/cwd/../../../../../lessons/..." (no /usr/include)  no points
#   include-abs-path    (made here) "/usr/include/../../<the checkout>/lessons/1-broadcast/
#                       solutions.c": its absolute path, found once through /proc/self/cwd
#                                                                                      no points
#   incbin-compile      .incbin of solutions.c in inline asm at compile time; slices of
#                       it come back as failure messages        no solutions text in the results
#   include-ancestor-cwd (made here) "/proc/<the checker's pid>/cwd/lessons/1-broadcast/
#                       solutions.c": an ancestor's working directory is the course   no points
#   read-judge          process_vm_readv, ptrace and /proc/PID/mem on its parent and the pids
#                       near it                   1.2-1.4 wrong (a way that worked exits early)
#   incbin-object       (made here) .incbin of the build's solutions.o, by its absolute path
#                                                                  the lesson does not compile
#   copy-fopen          fopen of solutions.c at run time, found through /proc/self/cwd,
#                       /proc/self/exe, an ancestor's /proc/PID/cwd, $PWD/$OLDPWD and the
#                       --results path; slices as failure messages    no solutions text, per way
#   copy-system-cc      system("cc -shared solutions.c") then dlopen: right answers    no points
#   forge-results-line  a "passed" line appended to the --results file on the test's command
#                       line (/proc/self/cmdline, /proc/PPID/cmdline)         no points, per way
#   forge-rows          "passed" rows for every exercise appended to grade.sh's rows.tsv
#                                                                                      no points
#   forge-daemon        a setsid daemon that rewrites results.json and summary.tsv after
#                       grade.sh exits, and its gradebook row after grade-all.sh exits
#                                                           still 0 points 3 s after grading
#   forge-proof         the harness's static test_teardown() called through the ELF symbol
#                       table; the proof key read from the test's memory; _exit(90); dlsym
#                                                                   no points, per exercise
#   forge-fd            "passed" lines (the judge's format) and a full-marks results.json
#                       written to every descriptor 0-1023 but its pipes; the same lines as
#                       1.3's reply                no points; 1.3 a failure of the student's code
#   damage-checkout     comment lines appended to the checkout's Makefile and tests/grade.sh
#                       and to $HOME/.bashrc; hostile-marker-* files in HOME, cwd and /tmp
#                       checkout (git ls-files hashed, git status), HOME and /tmp unchanged
#   damage-students     (grade-all) every other student's exercises.c overwritten
#                                          the victim's files unchanged, and its full marks
#   kill-grader         SIGKILL up the parent chain to grade-all.sh (or grade.sh), and its
#                       process group       grade.sh / grade-all.sh finish, every row there
#   exfil-tcp           GRADER_SECRET (its own and its ancestors') sent to 127.0.0.1:47231-5
#                                                   the checker's listener gets no connection
#   leak-environ        GRADER_SECRET (getenv, /proc/self/environ, ancestors' environ) as
#                       failure messages              the secret nowhere in the results, per way
#   linger              processes that outlive grading (setsid + PR_SET_NAME, setsid + exec
#                       sleep as hostile-marker-linger, one left in the grader's group)
#                                                       no hostile-marker process 1 s later
#   alarm-off           alarm(0), setitimer, SIGALRM ignored and blocked in the probe, then
#                       30 s of sleeping                    1.2 not passed, grading under 20 s
#   disk-fill           40 files of 999,000 bytes in the cwd and 40 in /tmp   none in /tmp, and
#                                                   at most 10 MB of them left in the checkout
# Every attack is also held to the checks of all the others: no points, the checkout, HOME and
# /tmp unchanged, no solutions text and no secret in results.json, summary.tsv and the report,
# no process left, no connection, and still 0 points at the end of the suite. Then grade-all:
# a victim (the course's solutions as its exercises.c: full marks) graded after forge-daemon,
# forge-results-line and damage-students, and then after kill-grader: grade-all exits normally,
# the gradebook has every student's row, the attackers 0 (also 3 s later), the victim full
# marks and its files unchanged. A baseline first: the victim alone gets full marks.
#
# Safety: the attacks write only marker lines (comments) to the checkout's Makefile and
# tests/grade.sh (restored from copies taken here, after every grading), HOME/.bashrc where HOME
# is this script's hostile-home-* directory, hostile-marker-* files in their working directory,
# HOME and /tmp (deleted here), and the victim's temporary copy; their processes exit within
# 60 s, and this script kills (by pid) any it finds. The kill attack signals only its own
# ancestors up to grade-all.sh / grade.sh, and their group only where the grader leads one (here
# it does: each grading runs under setsid). Network: 127.0.0.1 only.
set -u
build=${BUILD:-build}
make=${MAKE:-make}
hostile=tests/grading/hostile
if [ ! -d "$hostile" ] || [ ! -f tests/grade.sh ]; then
    echo "test_hostile.sh: run it from the course's root" >&2
    exit 2
fi
command -v python3 >/dev/null 2>&1 || { echo "test_hostile.sh: needs python3" >&2; exit 2; }
course=$(pwd -P)
mkdir -p "$build"
build_abs=$(cd "$build" && pwd -P)
tmp=$(mktemp -d "$build_abs/hostile-suite.XXXXXX") || exit 2
# each submission is one file, as a student's is: what the attacks share goes in place of their
# "#include HOSTILE_TOOLKIT" (toolkit.c) and "#include HOSTILE_WRONG" (wrong.c) lines
for dir in "$hostile"/*/; do
    name=$(basename "$dir")
    mkdir -p "$tmp/submissions/$name"
    cp -R "$dir." "$tmp/submissions/$name/"
    find "$tmp/submissions/$name" -name exercises.c | while IFS= read -r f; do
        awk -v dir="$hostile" '$1 == "#include" && $2 ~ /^HOSTILE_[A-Z]+$/ {
            part = dir "/" tolower(substr($2, 9)) ".c"
            while ((getline line < part) > 0) print line
            close(part)
            next
        } { print }' "$f" >"$f.new" && mv "$f.new" "$f"
    done
done
hostile=$tmp/submissions
secret=hostile-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
failed=0
suite_began=$(date +%s)
# each grading in a session and process group of its own, led by the grader
if setsid -f -w true >/dev/null 2>&1; then session="setsid -f -w"; else session=; fi

# ---- helpers ---------------------------------------------------------------------------------
check() { # DESCRIPTION COMMAND...: "ok", or "FAIL" and the first line of what the command said
    description=$1
    shift
    if said=$("$@" 2>&1); then
        echo "ok - $description"
    else
        echo "FAIL - $description"
        [ -n "$said" ] && printf '%s\n' "$said" | head -n 2 | cut -c 1-220 | sed 's/^/    # /'
        failed=1
    fi
}
inspect() { python3 "$tmp/inspect.py" "$@"; }
marker_pids() { # live processes (zombies aside) whose comm or command line has the marker, but those of an earlier run
    ps -eww -o pid= -o stat= -o comm= -o args= 2>/dev/null | awk '$2 !~ /^Z/ && /hostile-marke[r]/ { print $1 }' |
        grep -v -x -F -f "$tmp/earlier-pids.txt"
}
# [PATTERN]: hostile-marker-* files in the checkout, the HOMEs and /tmp, but those PATTERN matches
# (the grader's own directory for the submission: its scratch space is there)
# shellcheck disable=SC2120 # called with and without a pattern
marker_files() {
    {
        find "$course" "$tmp" -name 'hostile-marker-*' 2>/dev/null
        find /tmp -maxdepth 1 -name 'hostile-marker-*' 2>/dev/null
    } | sort -u | while IFS= read -r f; do
        # shellcheck disable=SC2254 # PATTERN is a pattern
        case $f in ${1:-/nonexistent}) ;; *) echo "$f" ;; esac
    done
}
remove_markers() {
    marker_files | while IFS= read -r f; do [ -f "$f" ] && rm -f "$f"; done
}
kill_markers() { # by pid, the marker processes of this run (their environment holds this run's secret)
    for pid in $(marker_pids); do
        tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q -x -F "GRADER_SECRET=$secret" && kill -KILL "$pid" 2>/dev/null
    done
}
snapshot() { # FILE: the checkout's tracked files (hashed) and git's view of the rest
    {
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
            git ls-files -z | xargs -0 sha256sum 2>/dev/null
            git status --porcelain 2>/dev/null
        else
            find . -path "./build*" -prune -o -type f -print | sort | xargs sha256sum 2>/dev/null
        fi
    } >"$1"
}
restore_checkout() { # the files the damage attack appends to, from the copies taken at the start
    [ -f "$tmp/saved.Makefile" ] && ! cmp -s "$tmp/saved.Makefile" Makefile && cp "$tmp/saved.Makefile" Makefile
    [ -f "$tmp/saved.grade.sh" ] && ! cmp -s "$tmp/saved.grade.sh" tests/grade.sh && cp "$tmp/saved.grade.sh" tests/grade.sh
    return 0
}
connections() { if [ -f "$tmp/connections.log" ]; then wc -l <"$tmp/connections.log" | tr -d ' '; else echo 0; fi; }
same() { # BEFORE AFTER: the same snapshot, or the first difference
    cmp -s "$1" "$2" && return 0
    diff "$1" "$2" | grep '^[<>]' | head -n 2
    return 1
}
none() { # COMMAND...: succeeds if the command prints nothing (and shows what it printed)
    printed=$("$@")
    [ -z "$printed" ] && return 0
    printf '%s\n' "$printed" | head -n 3 | tr '\n' ' '
    echo
    return 1
}
home_unchanged() { # HOME SAVED-BASHRC
    cmp -s "$1/.bashrc" "$2" || { echo ".bashrc now ends: $(tail -n 1 "$1/.bashrc")"; return 1; }
    extra=$(find "$1" -mindepth 1 ! -name .bashrc)
    [ -z "$extra" ] || { echo "new in HOME: $extra" | tr '\n' ' '; return 1; }
}
finished() { # CODE FILE OUTPUT: exit status 0 or 1, and FILE (results.json, the gradebook) written
    [ "$1" -le 1 ] && [ -s "$2" ] && return 0
    echo "exit status $1, $(basename "$2") $([ -s "$2" ] && echo written || echo missing); the output ends: $(tail -n 1 "$3")"
    return 1
}
faster() { # SECONDS LIMIT
    [ "$1" -lt "$2" ] && return 0
    echo "took $1 s"
    return 1
}
fill_bytes() { # bytes of hostile-marker-fill-* files anywhere under the checkout
    find "$course" -name 'hostile-marker-fill-*' -type f -exec cat {} + 2>/dev/null | wc -c | tr -d ' '
}
at_most() { # VALUE LIMIT
    [ "$1" -le "$2" ] && return 0
    echo "$1 bytes left"
    return 1
}
tree_hash() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }

cleanup() {
    restore_checkout
    [ -n "${course_mode:-}" ] && chmod "$course_mode" "$course"
    [ -n "${listener:-}" ] && kill "$listener" 2>/dev/null
    kill_markers
    remove_markers
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---- set up: the helper script, canaries, the listener ------------------------------------------
cat >"$tmp/inspect.py" <<'PYTHON'
import json, os, re, select, socket, subprocess, sys, time


def text_of(path):
    """A results file's text: every string of results.json decoded, or the file as it is."""
    try:
        raw = open(path, 'rb').read().decode('utf-8', 'replace')
    except OSError:
        return ''
    if path.endswith('.json'):
        try:
            strings = []
            def walk(v):
                if isinstance(v, str): strings.append(v)
                elif isinstance(v, dict): [walk(x) for x in v.values()]
                elif isinstance(v, list): [walk(x) for x in v]
            walk(json.loads(raw))
            return raw + '\n' + '\n'.join(strings)
        except ValueError:
            pass
    return raw


def results(path):
    with open(path) as f:
        return json.load(f)


def cmd_lines(out):
    """Lines found in a lessons/*/solutions.c and in no other file of the course."""
    try:
        files = subprocess.run(['git', 'ls-files'], capture_output=True, text=True, check=True).stdout.split('\n')
        files = [f for f in files if f]
    except Exception:
        files = []
        for root, dirs, names in os.walk('.'):
            dirs[:] = [d for d in dirs if not d.startswith('build') and d != '.git']
            files += [os.path.relpath(os.path.join(root, n)) for n in names]
    solutions = [f for f in files if re.fullmatch(r'lessons/[1-9]-[^/]*/solutions\.c', f)]
    others = []
    for f in files:
        if f in solutions or f.startswith('tests/grading/hostile/'):
            continue
        try:
            others.append(open(f, 'rb').read().decode('utf-8', 'replace'))
        except OSError:
            pass
    other = '\n'.join(others)
    found = []
    for s in solutions:
        for line in open(s, encoding='utf-8', errors='replace'):
            line = line.strip()
            if len(line) >= 20 and line not in other and line not in found:
                found.append(line)
    with open(out, 'w') as f:
        f.write('\n'.join(found) + '\n')
    print(len(found), 'lines from', len(solutions), 'solutions.c files')
    return 0 if found else 1


def cmd_leak(lines_file, secret, *paths):
    """Exit 1 (naming it) if a solutions line or the secret is in one of the files."""
    lines = [l for l in open(lines_file).read().split('\n') if l]
    for p in paths:
        text = text_of(p)
        if secret in text:
            print('%s holds GRADER_SECRET (%s)' % (p, secret))
            return 1
        for l in lines:
            if l in text:
                print('%s holds a line of solutions.c: %s' % (p, l[:90]))
                return 1
    return 0


def cmd_zero(results_path, summary_path):
    """Exit 0 if results.json scores 0 (its total and every test) and summary.tsv's earned column sums to 0."""
    try:
        r = results(results_path)
    except (OSError, ValueError) as e:
        print('no results.json to read (%s)' % e.__class__.__name__)
        return 1
    scored = ['%s %s/%s' % (t.get('name', '?').split(' ')[0], t.get('score'), t.get('max_score'))
              for t in r.get('tests', []) if t.get('score')]
    earned = 0
    try:
        for row in open(summary_path):
            f = row.rstrip('\n').split('\t')
            if len(f) > 1 and f[1].strip():
                earned += int(f[1])
    except (OSError, ValueError) as e:
        print('no summary.tsv to read (%s)' % e.__class__.__name__)
        return 1
    if r.get('score') == 0 and not scored and earned == 0:
        return 0
    print('results.json score %s / %s (%s); summary.tsv earned %d' % (r.get('score'), r.get('max_score'),
          ', '.join(scored[:6]) or 'no test scored', earned))
    return 1


def cmd_notpassed(results_path, exercise):
    """Exit 0 if exercise ID did not pass (it is there and scored 0)."""
    try:
        tests = results(results_path).get('tests', [])
    except (OSError, ValueError) as e:
        print('no results.json to read (%s)' % e.__class__.__name__)
        return 1
    mine = [t for t in tests if t.get('name', '').split(' ')[0] == exercise]
    if not mine:
        print('no %s in results.json' % exercise)
        return 1
    bad = [t for t in mine if t.get('score') or t.get('status') == 'passed']
    if bad:
        print('%s: %s, %s / %s' % (exercise, bad[0].get('status'), bad[0].get('score'), bad[0].get('max_score')))
        return 1
    print('%s: %s' % (exercise, mine[0].get('output', '')[:100]))
    return 0


def cmd_output(results_path, exercise):
    """Prints exercise ID's output (for evidence)."""
    try:
        for t in results(results_path).get('tests', []):
            if t.get('name', '').split(' ')[0] == exercise:
                print(t.get('output', ''))
    except (OSError, ValueError):
        pass
    return 0


def cmd_leak_in(lines_file, secret, results_path, exercise):
    """Exit 1 if exercise ID's output in results.json holds a solutions line or the secret."""
    lines = [l for l in open(lines_file).read().split('\n') if l]
    try:
        tests = results(results_path).get('tests', [])
    except (OSError, ValueError):
        return 0
    for t in tests:
        if t.get('name', '').split(' ')[0] != exercise:
            continue
        out = t.get('output', '')
        if secret in out:
            print('%s: %s' % (exercise, out[:120]))
            return 1
        for l in lines:
            if l in out:
                print('%s: %s' % (exercise, out[:120]))
                return 1
    return 0


def cmd_row(book, student, total):
    """Exit 0 if the gradebook has STUDENT's row with that total."""
    try:
        rows = [r.rstrip('\n') for r in open(book)]
    except OSError:
        print('no gradebook')
        return 1
    mine = [r for r in rows if r.split(',')[0] == student]
    if not mine:
        print('no row for %s' % student)
        return 1
    last = mine[0].split(',')[-1]
    if last == total and len(mine) == 1:
        return 0
    print('%s' % ' | '.join(mine)[:160])
    return 1


def cmd_rows(book, *students):
    """Exit 0 if the gradebook has exactly one graded row for each student."""
    try:
        rows = [r.rstrip('\n') for r in open(book)]
    except OSError:
        print('no gradebook')
        return 1
    missing = [s for s in students if sum(1 for r in rows if r.split(',')[0] == s) != 1]
    errors = [r.split(',')[0] for r in rows if r.split(',')[1:2] == ['error']]
    if missing or errors:
        print('missing: %s; "error": %s (%d rows)' % (' '.join(missing) or '-', ' '.join(errors) or '-', len(rows)))
        return 1
    return 0


def cmd_listen(log, ports_file):
    """Listens on 127.0.0.1:47231-47235 (those free), logging one line per connection: the port, the
    bytes received and whether they held the GRADER_SECRET of the environment; never the bytes."""
    secret = os.environ.get('GRADER_SECRET', '\0')
    sockets = []
    for port in range(47231, 47236):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(('127.0.0.1', port))
            s.listen(16)
            sockets.append(s)
        except OSError:
            s.close()
    with open(ports_file, 'w') as f:
        f.write(' '.join(str(s.getsockname()[1]) for s in sockets) + '\n')
    until = time.time() + 600  # never outlives the suite by long
    while sockets and time.time() < until:
        ready, _, _ = select.select(sockets, [], [], 1.0)
        for s in ready:
            conn, _ = s.accept()
            conn.settimeout(1.0)
            data = b''
            try:
                while len(data) < 1 << 20:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            conn.close()
            with open(log, 'a') as f:
                f.write('connection to port %d: %d bytes, GRADER_SECRET %s\n' % (
                    s.getsockname()[1], len(data), 'sent' if secret.encode() in data else 'not sent'))
    return 0


if __name__ == '__main__':
    sys.exit(globals()['cmd_' + sys.argv[1].replace('-', '_')](*sys.argv[2:]))
PYTHON
: >"$tmp/zero-at-once.txt"
echo 0 >"$tmp/earlier-pids.txt"
marker_pids >"$tmp/earlier-pids.txt.new" # an earlier run's, still alive (they exit within 60 s): not this run's
cat "$tmp/earlier-pids.txt.new" >>"$tmp/earlier-pids.txt"
cp Makefile "$tmp/saved.Makefile"
cp tests/grade.sh "$tmp/saved.grade.sh"
if [ "${GRADE_SANDBOX:-}" = uid ]; then
    # user 65534 without namespaces: the course hidden by its permissions, as the instructors'
    # page says to (grade.sh refuses otherwise); given back at the end
    course_mode=$(stat -c %a "$course") && chmod o-rwx "$course"
    echo "# GRADE_SANDBOX=uid: $course made unreadable to others for the run (it was $course_mode)"
fi
kill_markers
remove_markers
check "setup: distinctive lines of the lessons' solutions.c, to look for in what the grader reports" \
    inspect lines "$tmp/solution-lines.txt"
GRADER_SECRET=$secret python3 "$tmp/inspect.py" listen "$tmp/connections.log" "$tmp/ports.txt" >/dev/null 2>&1 &
listener=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/ports.txt" ] && break; sleep 0.2; done
ports=$(cat "$tmp/ports.txt" 2>/dev/null)
[ -n "$ports" ] || echo "skip - network: no port of 47231-47235 was free to listen on"

# grade NAME SUBMISSION: grades it as hostile-NAME, under its own session, in a fresh HOME
# holding a canary .bashrc, with GRADER_SECRET in the environment; sets code, took, results,
# summary, report, home
grade() {
    name=$1
    home=$tmp/hostile-home-$name
    results=$tmp/results/$name/results.json
    summary=$tmp/results/$name/summary.tsv
    report=$tmp/$name.txt
    mkdir -p "$home" "$tmp/results/$name"
    echo "# the checker's canary .bashrc for $name" >"$home/.bashrc"
    cp "$home/.bashrc" "$tmp/$name.bashrc"
    snapshot "$tmp/$name.before"
    connected=$(connections)
    began=$(date +%s)
    HOME=$home GRADER_SECRET=$secret BUILD=$build MAKE=$make $session sh tests/grade.sh --submission "$2" \
        --name "hostile-$name" --results "$results" >"$report" 2>&1 </dev/null
    code=$?
    took=$(($(date +%s) - began))
}
# graded NAME, right after grade NAME returned: it finished, with 0 points
graded() {
    name=$1
    check "$name: grading finished normally (exit 0 or 1, results.json written)" finished "$code" "$results" "$report"
    check "$name: no points (results.json and summary.tsv)" inspect zero "$results" "$summary"
    inspect zero "$results" "$summary" >/dev/null 2>&1 && echo "$name" >>"$tmp/zero-at-once.txt"
}
# contained NAME, after its own checks: what every attack is held to
contained() {
    name=$1
    snapshot "$tmp/$name.after"
    check "$name: the checkout is unchanged (tracked files, git status)" same "$tmp/$name.before" "$tmp/$name.after"
    restore_checkout
    check "$name: HOME is unchanged (.bashrc, nothing new)" home_unchanged "$home" "$tmp/$name.bashrc"
    check "$name: no hostile-marker-* file outside its scratch space (checkout, HOME, /tmp)" \
        none marker_files "$build_abs/grade/hostile-$name/*"
    check "$name: no solutions text and no GRADER_SECRET in results.json, summary.tsv or the report" \
        inspect leak "$tmp/solution-lines.txt" "$secret" "$results" "$summary" "$report"
    [ -n "$ports" ] && check "$name: no connection to the listener on 127.0.0.1" test "$(connections)" -eq "$connected"
    sleep 1
    check "$name: no hostile-marker process left 1 s after grading" none marker_pids
    kill_markers
    remove_markers
}

# ---- the baseline: the course's solutions get full marks ---------------------------------------------
victim=$tmp/victim
for dir in lessons/[1-9]-*; do
    mkdir -p "$victim/$dir"
    cp "$dir/solutions.c" "$victim/$dir/exercises.c"
done
BUILD=$build MAKE=$make sh tests/grade.sh --submission "$victim" --name hostile-baseline \
    --results "$tmp/results/baseline/results.json" >"$tmp/baseline.txt" 2>&1 </dev/null
for dir in lessons/[1-9]-*; do
    n=${dir#lessons/}
    "$build/lesson${n%%-*}/list_exercises" --list
done >"$tmp/exercises.tsv"
full=$(awk -F '	' '{ s += $2 } END { print s + 0 }' "$tmp/exercises.tsv")
check "baseline: the course's solutions get full marks ($full)" grep -q "\"score\": $full," "$tmp/results/baseline/results.json"
check "baseline: graded in a sandbox: $(head -n 1 "$tmp/baseline.txt" | cut -c 1-60)..." \
    sh -c "head -n 1 '$tmp/baseline.txt' | grep -q -E '^sandbox: $(case ${GRADE_SANDBOX:-} in uid) echo 'uid of its own' ;; *) echo '(namespaces|uid of its own)' ;; esac)'"

# ---- each attack alone -------------------------------------------------------------------------------
# one made here, as its path is this checkout's: solutions.c by its absolute path, dressed as a system header
generated=$tmp/generated
mkdir -p "$generated/include-abs-path/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION include-abs-path (made by tests/grading/test_hostile.sh: the path is this"
    echo " * checkout's). Attacks: the include check, with the course's solutions.c by its absolute path,"
    echo " * under /usr/include/../.. so that it looks like a system header."
    echo " * Contained: the lesson is rejected or does not compile, and the submission scores 0. */"
    echo "#include \"/usr/include/../..$course/lessons/1-broadcast/solutions.c\""
} >"$generated/include-abs-path/lessons/1-broadcast/exercises.c"
# and one that reaches the checkout through a process of the grader's: this script's own
# working directory, /proc/PID/cwd, is the course
mkdir -p "$generated/include-ancestor-cwd/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION include-ancestor-cwd (made by tests/grading/test_hostile.sh: the pid is"
    echo " * the checker's). Attacks: an ancestor's working directory, which is the course: solutions.c"
    echo " * through /proc/PID/cwd. Contained: the lesson does not compile, and the submission scores 0. */"
    echo "#include \"/proc/$$/cwd/lessons/1-broadcast/solutions.c\""
} >"$generated/include-ancestor-cwd/lessons/1-broadcast/exercises.c"
# and one that embeds what the build made from the solutions: their object, by its absolute path
[ -f "$build_abs/obj/lessons/1-broadcast/solutions.o" ] || $make --no-print-directory -s BUILD="$build" all >/dev/null 2>&1
mkdir -p "$generated/incbin-object/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION incbin-object (made by tests/grading/test_hostile.sh: the path is this"
    echo " * checkout's). Attacks: the build directory, where the solutions are compiled: their object"
    echo " * embedded with .incbin, ready to be loaded and called. The exercises are TODO stubs."
    echo " * Contained: the lesson does not compile (the object is out of the sandbox's reach). */"
    printf '__asm__(".section .rodata\\n.incbin \\"%s\\"\\n.previous");\n' "$build_abs/obj/lessons/1-broadcast/solutions.o"
    sh tests/stubs.sh lessons/1-broadcast/exercises.h
} >"$generated/incbin-object/lessons/1-broadcast/exercises.c"
# one whose compile error carries escape sequences, for the instructor's terminal: clear the
# screen, print a full score, hide what follows, set the clipboard (OSC 52)
mkdir -p "$generated/escape-report/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION escape-report (made by tests/grading/test_hostile.sh). Attacks: the"
    echo " * instructor's terminal, through the compiler's first error, which the report quotes."
    echo " * Contained: the report holds no control character; the lesson does not compile. */"
    printf '#error \033]52;c;ZWNobyBob3N0aWxl\007\033[2J\033[Hscore: 15 / 15 (every graded exercise passed: exit status 0)\033[8m\n'
} >"$generated/escape-report/lessons/1-broadcast/exercises.c"
# and one whose function name, an assembler label no exercise calls, carries them to the note
# on code that refers to the library
mkdir -p "$generated/escape-symbol/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION escape-symbol (made by tests/grading/test_hostile.sh). Attacks: the"
    echo " * instructor's terminal, through a function name in the report's note. Contained: the"
    echo " * note shows the name with ? for what is not a C name. */"
    printf '__asm__(".text\\n\\"\\033[2Jevil\\":\\n movq broadcast_shapes@GOTPCREL(%%rip), %%rax\\n ret\\n");\n'
    sh tests/stubs.sh lessons/1-broadcast/exercises.h
} >"$generated/escape-symbol/lessons/1-broadcast/exercises.c"
# and one padded with megabytes of references to a library function, for the grader's check of
# which library functions a lesson calls (it ran outside any time limit, quadratic in them)
mkdir -p "$generated/pad-relocations/lessons/1-broadcast"
{
    echo "/* HOSTILE SUBMISSION pad-relocations (made by tests/grading/test_hostile.sh). Attacks: the"
    echo " * grader's time, with 1.4 million references to tensor_add in data. Contained: the object"
    echo " * is not analysed (the report says so), and grading ends in seconds. */"
    printf '%s\n' '__asm__(".data\n.rept 1400000\n.quad tensor_add\n.endr\n.text\n");'
    sh tests/stubs.sh lessons/1-broadcast/exercises.h
} >"$generated/pad-relocations/lessons/1-broadcast/exercises.c"
for name in include-proc-cwd include-next include-relative include-abs-proc include-abs-path include-ancestor-cwd \
    incbin-compile incbin-object read-judge copy-fopen escape-report escape-symbol pad-relocations \
    copy-system-cc forge-results-line forge-rows forge-daemon forge-proof forge-fd damage-checkout kill-grader exfil-tcp \
    leak-environ linger alarm-off disk-fill; do
    submission=$hostile/$name
    [ -d "$submission" ] || submission=$generated/$name
    grade "$name" "$submission"
    graded "$name"
    case $name in
    copy-fopen)
        way=1
        for how in "/proc/self/cwd" "/proc/self/exe" "an ancestor's /proc/PID/cwd" "\$PWD, \$OLDPWD" "the --results path"; do
            check "copy-fopen: 1.$way (solutions.c found through $how) hands back no solutions text" \
                inspect leak-in "$tmp/solution-lines.txt" "$secret" "$results" "1.$way"
            way=$((way + 1))
        done ;;
    forge-results-line)
        check "forge-results-line: 1.1 (the results file from /proc/self/cmdline) does not pass" inspect notpassed "$results" 1.1
        check "forge-results-line: 1.4 (the results file from /proc/PPID/cmdline) does not pass" inspect notpassed "$results" 1.4 ;;
    forge-daemon)
        sleep 3
        check "forge-daemon: still no points in results.json and summary.tsv 3 s after grade.sh returned" \
            inspect zero "$results" "$summary" ;;
    forge-proof)
        check "forge-proof: 1.2 (test_teardown called through the ELF symbol table) does not pass" inspect notpassed "$results" 1.2
        check "forge-proof: 1.3 (the proof key read from the test's memory) does not pass" inspect notpassed "$results" 1.3
        check "forge-proof: 1.4 (_exit(90)) does not pass" inspect notpassed "$results" 1.4
        check "forge-proof: 1.5 (test_teardown through dlsym) does not pass" inspect notpassed "$results" 1.5 ;;
    include-ancestor-cwd)
        check "include-ancestor-cwd: outside the sandbox it compiles (the attack is real)" \
            cc -I lessons/1-broadcast -I common -I tests -E "$submission/lessons/1-broadcast/exercises.c" -o "$tmp/include-ancestor-cwd.i"
        check "include-ancestor-cwd: the lesson does not compile" grep -q -E '^  1\.1 .* did not compile$' "$report" ;;
    read-judge)
        printf '#include "exercises.h"\nint main(int argc, char **argv) { int64_t a[1] = {1}, m[4]; int r;\n
            if (argv[1][0] == 50) ex1_2_broadcast_shapes(a, 1, a, 1, m, &r); if (argv[1][0] == 51) ex1_3_broadcast_strides(a, 1, a, a, 1, m);\n
            if (argv[1][0] == 52) ex1_4_broadcast_map(a, 1, a, 1, m); return argc > 0; }\n' >"$tmp/read-judge-main.c"
        if cc -I lessons/1-broadcast -I common -I tests "$submission/lessons/1-broadcast/exercises.c" "$tmp/read-judge-main.c" \
            -o "$tmp/read-judge" 2>/dev/null; then
            check "read-judge: outside the sandbox each way reads its parent (the attack is real)" \
                sh -c "'$tmp/read-judge' 2 && '$tmp/read-judge' 3 && '$tmp/read-judge' 4"
        fi
        for way in "1.2 process_vm_readv" "1.3 ptrace" "1.4 /proc/PID/mem"; do
            check "read-judge: ${way#* } cannot read the judge or any process near it (${way%% *} wrong, not exited early)" \
                grep -q -E "^  ${way%% *} .* wrong$" "$report"
        done ;;
    incbin-object)
        check "incbin-object: outside the sandbox it compiles (the attack is real)" \
            cc -I lessons/1-broadcast -I common -I tests -c "$submission/lessons/1-broadcast/exercises.c" -o "$tmp/incbin-object.o"
        check "incbin-object: the lesson does not compile, the solutions' object out of reach" \
            sh -c "grep -q -E '^  1\.1 .* did not compile$' '$report' && grep -q -E '(file not found: |Could not find incbin file .)[^ ]*solutions\.o|solutions\.o: (No such file|Permission denied)' '$report'" ;;
    escape-report)
        check "escape-report: the report quotes the compile error ..." grep -q -E '^  1\.1 .* did not compile$' "$report"
        check "escape-report: ... with no control character in it (no ESC, no BEL)" \
            sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$report'" ;;
    escape-symbol)
        check "escape-symbol: the note names the function, with ? for its escape sequence ..." \
            grep -q "note: ???2Jevil, which no exercise calls" "$report"
        check "escape-symbol: ... and the report holds no control character" \
            sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$report'" ;;
    pad-relocations)
        check "pad-relocations: the report says the object was not checked for library calls" \
            grep -q "lesson 1's object was not checked for calls of the course's library" "$report"
        check "pad-relocations: grading it takes well under 60 s (took $took s)" faster "$took" 60 ;;
    forge-fd)
        check "forge-fd: 1.3 (forged lines in its reply pipe) fails as the student's program, not the grader's" \
            sh -c "! grep -q 'a fault of the grader' '$report' && grep -q -E '^  1\.3 .* crashed' '$report'" ;;
    damage-checkout)
        check "damage-checkout: the checkout's Makefile is unchanged" cmp "$tmp/saved.Makefile" Makefile
        check "damage-checkout: the checkout's tests/grade.sh is unchanged" cmp "$tmp/saved.grade.sh" tests/grade.sh
        check "damage-checkout: HOME/.bashrc is unchanged" cmp "$tmp/$name.bashrc" "$home/.bashrc"
        check "damage-checkout: no hostile-marker-damage-tmp in /tmp" test ! -e /tmp/hostile-marker-damage-tmp ;;
    leak-environ)
        check "leak-environ: 1.2 (getenv) hands back no GRADER_SECRET" inspect leak-in "$tmp/solution-lines.txt" "$secret" "$results" 1.2
        check "leak-environ: 1.3 (/proc/self/environ) hands back no GRADER_SECRET" inspect leak-in "$tmp/solution-lines.txt" "$secret" "$results" 1.3
        check "leak-environ: 1.4 (the ancestors' /proc/PID/environ) hands back no GRADER_SECRET" \
            inspect leak-in "$tmp/solution-lines.txt" "$secret" "$results" 1.4 ;;
    alarm-off)
        check "alarm-off: 1.2 does not pass (timed out, its probe limit kept)" inspect notpassed "$results" 1.2
        check "alarm-off: grading it takes well under 30 s (took $took s)" faster "$took" 20 ;;
    disk-fill)
        check "disk-fill: no hostile-marker-fill file in /tmp" none find /tmp -maxdepth 1 -name 'hostile-marker-fill-*'
        check "disk-fill: at most 10 MB of its files left anywhere under the checkout" at_most "$(fill_bytes)" 10000000 ;;
    esac
    contained "$name"
done

# ---- grade-all: a victim graded after the attackers ---------------------------------------------------
# grade_all RUN STUDENTS...: a submissions directory with those attackers (as a-NAME, b-NAME, ...)
# and zz-victim; sets code, book, subs
grade_all() {
    run=$1
    shift
    subs=$tmp/grade-all-$run
    out=$tmp/gradebook-$run
    mkdir -p "$subs"
    : >"$subs/hostile-victims-ok" # the damage attack's interlock: it writes only where this is
    students=
    letter=a
    for attacker in "$@"; do
        cp -R "$hostile/$attacker" "$subs/$letter-$attacker"
        students="$students $letter-$attacker"
        letter=$(echo "$letter" | tr 'a-x' 'b-y')
    done
    cp -R "$victim" "$subs/zz-victim"
    tree_hash "$subs/zz-victim" >"$tmp/victim-$run.before"
    home=$tmp/hostile-home-grade-all-$run
    mkdir -p "$home"
    echo "# the checker's canary .bashrc for grade-all $run" >"$home/.bashrc"
    cp "$home/.bashrc" "$tmp/grade-all-$run.bashrc"
    snapshot "$tmp/grade-all-$run.before"
    connected=$(connections)
    HOME=$home GRADER_SECRET=$secret BUILD=$build MAKE=$make $session sh tests/grade-all.sh --submissions "$subs" \
        --out "$out" >"$tmp/grade-all-$run.txt" 2>&1 </dev/null
    code=$?
    book=$out/gradebook.csv
}
grade_all_contained() { # RUN: the checks for the whole run
    run=$1
    check "grade-all $run: grade-all.sh exited normally (status 0 or 1, a gradebook written)" finished "$code" "$book" "$tmp/grade-all-$run.txt"
    check "grade-all $run: the gradebook exists, with a graded row for every student" inspect rows "$book" $students zz-victim
    check "grade-all $run: the victim (the course's solutions) keeps full marks ($full)" inspect row "$book" zz-victim "$full"
    tree_hash "$subs/zz-victim" >"$tmp/victim-$run.after"
    check "grade-all $run: the victim's submission files are unchanged" same "$tmp/victim-$run.before" "$tmp/victim-$run.after"
    for student in $students; do
        check "grade-all $run: $student's row totals 0" inspect row "$book" "$student" 0
    done
    snapshot "$tmp/grade-all-$run.after"
    check "grade-all $run: the checkout is unchanged" same "$tmp/grade-all-$run.before" "$tmp/grade-all-$run.after"
    restore_checkout
    check "grade-all $run: HOME is unchanged" home_unchanged "$home" "$tmp/grade-all-$run.bashrc"
    set -- "$book" "$tmp/grade-all-$run.txt"
    for student in $students; do set -- "$@" "$out/$student/results.json" "$out/$student/summary.tsv" "$out/$student/report.txt"; done
    check "grade-all $run: no solutions text and no GRADER_SECRET in any attacker's results, the gradebook or the output" \
        inspect leak "$tmp/solution-lines.txt" "$secret" "$@"
    [ -n "$ports" ] && check "grade-all $run: no connection to the listener" test "$(connections)" -eq "$connected"
    check "grade-all $run: no hostile-marker-* file outside the students' scratch spaces" \
        none marker_files "$build_abs/grade/*"
    sleep 1
    check "grade-all $run: no hostile-marker process left 1 s after grading" none marker_pids
}

grade_all 1 forge-daemon forge-results-line damage-students
grade_all_contained 1
sleep 3
check "grade-all 1: 3 s later, a-forge-daemon's row still totals 0" inspect row "$book" a-forge-daemon 0
check "grade-all 1: 3 s later, a-forge-daemon's results.json and summary.tsv still give 0" \
    inspect zero "$out/a-forge-daemon/results.json" "$out/a-forge-daemon/summary.tsv"
kill_markers
remove_markers

grade_all 2 kill-grader
grade_all_contained 2
kill_markers
remove_markers

# ---- the late re-check: an attack with 0 points right after its grading still has 0 now --------------
late=
while IFS= read -r name; do
    inspect zero "$tmp/results/$name/results.json" "$tmp/results/$name/summary.tsv" >/dev/null 2>&1 || late="$late $name"
done <"$tmp/zero-at-once.txt"
check "late re-check: every attack that had 0 points right after grading still has 0 at the end" \
    sh -c "[ -z '$late' ] || { echo 'changed since:$late'; exit 1; }"
echo "# $(($(date +%s) - suite_began)) s; the suite's files: $tmp"
exit $failed
