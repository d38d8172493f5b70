#!/bin/sh
# undeclared.sh LOG HEADER... - the header to include for each function the compiler log LOG
# says was called without a declaration (make test's tests/run.sh and the grader, tests/grade.sh).
# That is an error for a student's file (-Werror=implicit-function-declaration): C would take
# the function to return int and a float argument as a double, so a returned pointer is cut to
# 32 bits and the numbers are garbage, far from the cause. The course's headers are searched
# for the declaration; gcc and clang name the C library's own ("note: include '<string.h>'").
log=$1
shift
LOG=$log LC_ALL=C awk -v q="'" '
    function quoted(s) { return match(s, q "[A-Za-z_][A-Za-z0-9_]*" q) ? substr(s, RSTART + 1, RLENGTH - 2) : "" }
    FILENAME == ENVIRON["LOG"] {
        if ($0 ~ /error: / && $0 ~ /implicit-function-declaration/ && (name = quoted($0)) != "" && !(name in seen)) {
            seen[name] = 1; names[++n] = name
        }
        if ($0 ~ / note: include / && match($0, /<[A-Za-z0-9_\/.]+>/)) {
            header = substr($0, RSTART, RLENGTH); sub(/.*declaration (of|for) /, ""); system_header[quoted($0)] = header
        }
        next
    }
    FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
    /^[A-Za-z_#]/ {  # a declaration (or a macro) starts its line; comments and bodies do not
        for (i = 1; i <= n; i++)
            if (!(names[i] in where) && match($0, "(^|[^A-Za-z0-9_])" names[i] "[ \t]*[(]")) where[names[i]] = "\"" file "\""
    }
    END {
        for (i = 1; i <= n; i++) {
            h = names[i] in where ? where[names[i]] : names[i] in system_header ? system_header[names[i]] : ""
            if (h == "") { none = none (none == "" ? "" : ", ") names[i]; continue }
            if (!(h in listed)) { listed[h] = names[i]; headers[++m] = h } else listed[h] = listed[h] ", " names[i]
        }
        for (j = 1; j <= m; j++) out = out (out == "" ? "" : ", ") "#include " headers[j] " (" listed[headers[j]] ")"
        if (none != "") out = out (out == "" ? "" : "; ") "no header of the course declares " none " (a misspelt name, or a function of the file used above its definition?)"
        if (out != "") printf "Include each function%cs header (without a declaration C takes it to return int, cutting a returned pointer to 32 bits): %s\n", 39, out
    }' "$log" "$@"
