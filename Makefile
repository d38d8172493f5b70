# Makefile - every command of the course. `make help` lists them.
#
# Lessons are discovered from lessons/N-topic/. Each lesson directory holds:
#   TOPIC.c, TOPIC.h     the lesson's ops, built into the library every later lesson links
#   walkthrough.c        the program `make lessonN` runs
#   exercises.c          the stubs the student edits (exercises.h says what each must do)
#   solutions.c          the reference solutions
#   test_TOPIC.c         the lesson's core tests (Check)
#   test_exercises.c     the exercise tests and the exercise table (ids, titles, points)
#   plot.c, plot.gp      optional: the data and the gnuplot script of the lesson's plot
#   bench.c, bench.gp    optional: the lesson's benchmark (make bench), and a plot of its data
#   diagram.c, diagram-NAME.gp   optional: the lesson's pictures of memory (make diagrams),
#                        TOPIC_diagram.c the library code that asks the library for their cells

.DEFAULT_GOAL := all
SHELL := /bin/sh
comma := ,
# Build on every core unless the command line says otherwise (-j1 wins over this). macOS has
# no nproc.
MAKEFLAGS += -j$(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)

CC ?= cc
CFLAGS ?= -O2 -g
LDFLAGS ?=
PKG_CONFIG ?= pkg-config
# A cross build runs its programs through an emulator: EMULATOR=qemu-aarch64 (.ci/run does).
EMULATOR ?=
# A call to a function whose header is missing is an error, not a warning: C would take it to
# return an int, which cuts a returned pointer to 32 bits and crashes far from the cause.
STUDENT_WARNINGS := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror=implicit-function-declaration
WARNINGS := $(STUDENT_WARNINGS)
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
# SANITIZE=1 builds everything with AddressSanitizer and UBSan, in a build directory of its own.
ifeq ($(SANITIZE),1)
override CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
BUILD ?= build-sanitize
endif
BUILD ?= build

# Commands print as "CC file"; V=1 prints them in full.
ifeq ($(V),1)
Q :=
say = @:
else
Q := @
say = @printf '  %-4s %s\n'
endif

LESSON_DIRS := $(sort $(wildcard lessons/[1-9]-*))
# Each lesson builds on the ones before it, never on a later one: lesson N's files compile with
# common/, tests/ and lessons 1..N on the include path (LESSON_RULES), so a later lesson's
# header is not found (`make test` checks it: check-direction), and common/'s with common/
# alone. tests/ sees every lesson.
INCLUDES := -Icommon -Itests $(addprefix -I,$(LESSON_DIRS))
ALL_CFLAGS = $(WARNINGS) $(CFLAGS) $(INCLUDES) -MMD -MP
LDLIBS := -lm

# Check's flags, asked of pkg-config once, when first needed (after `deps` has run).
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null))$(CHECK_CFLAGS)
CHECK_LIBS = $(eval CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null))$(CHECK_LIBS)

lesson_number = $(firstword $(subst -, ,$(notdir $(1))))
lesson_topic = $(patsubst $(call lesson_number,$(1))-%,%,$(notdir $(1)))
obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

NOT_LIBRARY := walkthrough.c exercises.c solutions.c plot.c bench.c diagram.c test_%.c
lesson_library_sources = $(filter-out $(addprefix $(1)/,$(NOT_LIBRARY)),$(wildcard $(1)/*.c))
LIBRARY_SOURCES := $(wildcard common/*.c) $(foreach d,$(LESSON_DIRS),$(call lesson_library_sources,$(d)))

# The fast files (common/simd.h) are compiled once per build of the CPU family the compiler
# targets, each with its instructions: on x86-64 the baseline (SSE2), AVX2 with FMA, and
# AVX-512; elsewhere (aarch64: NEON) the baseline alone. kernels.c picks the build the CPU runs.
FAST_SOURCES := common/tensor_fast.c $(wildcard lessons/*/*_fast.c)
ifneq ($(filter x86_64-% amd64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
SIMD_BUILDS := portable avx2 avx512
else
SIMD_BUILDS := portable
endif
SIMD_FLAGS_avx2 := -mavx2 -mfma
SIMD_FLAGS_avx512 := -mavx512f -mavx2 -mfma
fast_obj = $(foreach b,$(SIMD_BUILDS),$(patsubst %.c,$(BUILD)/obj/%.$(b).o,$(1)))
# the objects of sources: one for a plain file, one per build for a fast file
objs = $(call obj,$(filter-out $(FAST_SOURCES),$(1))) $(call fast_obj,$(filter $(FAST_SOURCES),$(1)))

# The whole library (the library's own tests and the grader link it), and lesson N's: the core
# and lessons 1 to N, so that `make lesson1` builds only what lesson 1 needs.
LIBRARY := $(BUILD)/libcourse.a
lesson_library = $(BUILD)/lesson$(1)/libcourse.a
HARNESS := $(call obj,tests/harness.c tests/remote.c)
# The library's own test programs, one per tests/test_NAME.c: the tensor core, conformance
# with PyTorch (golden files), every bad input, seeded random testing.
LIBRARY_TEST_SOURCES := $(wildcard tests/test_*.c)
LIBRARY_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(LIBRARY_TEST_SOURCES))
WALKTHROUGHS = $(foreach d,$(LESSON_DIRS),$(BUILD)/lesson$(call lesson_number,$(d))/walkthrough)

# ---- what the command line asks for --------------------------------------------------
# `make lesson1` runs lesson 1's walk-through. With a verb (`make lesson1 test`), lesson1 only
# chooses which lesson the verb acts on.
VERBS := test check plot plots bench bench-plots diagrams
VERB_GIVEN := $(filter $(VERBS),$(MAKECMDGOALS))
SELECTED := $(strip $(foreach d,$(LESSON_DIRS),$(if $(filter lesson$(call lesson_number,$(d)) $(call lesson_topic,$(d)),$(MAKECMDGOALS)),$(d))))
lesson_spec = $(call lesson_number,$(1)):$(call lesson_topic,$(1)):$(1)

.PHONY: all test check check-direction deps grader-deps plot-deps golden memcheck docs bench-plots check-docs grade grade-all grade-prereqs grade-env handout gradescope test-grader clean help $(VERBS)

# ---- the library -----------------------------------------------------------------------
$(call objs,$(wildcard common/*.c)): INCLUDES = -Icommon
$(LIBRARY): $(call objs,$(LIBRARY_SOURCES))
	@mkdir -p $(@D)
	$(say) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

define SIMD_BUILD_RULE
$(BUILD)/obj/%.$(1).o: %.c
	@mkdir -p $$(@D)
	$$(say) CC "$$< ($(1))"
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(SIMD_FLAGS_$(1)) -DSIMD_BUILD=$(1) -c $$< -o $$@
endef
$(foreach b,$(SIMD_BUILDS),$(eval $(call SIMD_BUILD_RULE,$(b))))

# The fast kernels may fuse a multiply and an add into one instruction where the CPU has it
# (FMA), which -std=c11 forbids by default; the reference kernels never do: they are the
# chapter's arithmetic. -fno-math-errno: sqrtf need not set errno (no fast kernel reads it), so
# a square root over a vector's lanes compiles to one vector instruction. -Wno-psabi: simd.h's
# helpers pass vectors by value, always inlined (gcc notes a calling convention no call uses).
$(call fast_obj,$(FAST_SOURCES)): ALL_CFLAGS += -ffp-contract=fast -fno-math-errno -Wno-psabi

# Objects that include check.h need Check installed first.
$(HARNESS) $(call obj,$(LIBRARY_TEST_SOURCES)): | deps
$(HARNESS) $(call obj,$(LIBRARY_TEST_SOURCES)): ALL_CFLAGS += $(CHECK_CFLAGS)

$(LIBRARY_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(HARNESS) $(LIBRARY)
	@mkdir -p $(@D)
	$(say) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(CHECK_LIBS) $(LDLIBS) -o $@

deps:
	@sh tests/ensure-deps.sh check

# The benchmarks' timing (tests/bench.c) records the flags they were built with. OpenBLAS, the
# baseline of lesson 6's matmul, is optional: found (or, as root, installed) when a benchmark
# is built; without it that column is left out.
BENCH_OBJ := $(call obj,tests/bench.c)
$(BENCH_OBJ): ALL_CFLAGS += -DBENCH_CFLAGS='"$(strip $(CFLAGS))"'
HAVE_OPENBLAS = $(eval HAVE_OPENBLAS := $(shell sh tests/ensure-deps.sh openblas >/dev/null 2>&1 && \
    printf '\043include <cblas.h>\nint main(void) { return openblas_get_num_threads() < 0; }\n' | \
    $(CC) -x c - -lopenblas -o /dev/null >/dev/null 2>&1 && echo 1))$(HAVE_OPENBLAS)
BENCH_CFLAGS = $(if $(HAVE_OPENBLAS),-DHAVE_OPENBLAS)
BENCH_LIBS = $(if $(HAVE_OPENBLAS),-lopenblas)

plot-deps:
	@sh tests/ensure-deps.sh gnuplot

# ---- one block of rules per lesson -----------------------------------------------------
define LESSON_RULES
# $(1) = directory, $(2) = number, $(3) = topic
L$(2)_OUT := $(BUILD)/lesson$(2)
L$(2)_INCLUDES := -Icommon -Itests $(addprefix -I,$(wordlist 1,$(2),$(LESSON_DIRS)))
$(call objs,$(wildcard $(1)/*.c)) $$(L$(2)_OUT)/stubs.o $(BUILD)/grader/lesson$(2)/calls.o: INCLUDES = $$(L$(2)_INCLUDES)
L$(2)_LIBRARY := $(call lesson_library,$(2))
$$(L$(2)_LIBRARY): $(call objs,$(wildcard common/*.c) $(foreach d,$(wordlist 1,$(2),$(LESSON_DIRS)),$(call lesson_library_sources,$(d))))
	@mkdir -p $$(@D)
	$$(say) AR $$@
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
L$(2)_TEST_OBJS := $(call obj,$(1)/test_$(3).c $(1)/test_exercises.c)

$$(L$(2)_TEST_OBJS): | deps
$$(L$(2)_TEST_OBJS): ALL_CFLAGS += $$(CHECK_CFLAGS)

$$(L$(2)_OUT)/walkthrough: $(call obj,$(1)/walkthrough.c) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@

$$(L$(2)_OUT)/test_core: $(call obj,$(1)/test_$(3).c) $(HARNESS) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(CHECK_LIBS) $$(LDLIBS) -o $$@

# The exercise tests, linked once against the student's file and once against the solutions.
$$(L$(2)_OUT)/test_exercises: $(call obj,$(1)/test_exercises.c $(1)/exercises.c) $(HARNESS) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(CHECK_LIBS) $$(LDLIBS) -o $$@

$$(L$(2)_OUT)/test_solutions: $(call obj,$(1)/test_exercises.c $(1)/solutions.c) $(HARNESS) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(CHECK_LIBS) $$(LDLIBS) -o $$@

ifneq ($(wildcard $(1)/plot.c),)
# The plot: plot.c writes the data, plot.gp draws it (headless, PNG).
$$(L$(2)_OUT)/plot: $(call obj,$(1)/plot.c) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@

$$(L$(2)_OUT)/$(3).png: $$(L$(2)_OUT)/plot $(1)/plot.gp | plot-deps
	$$(say) PLOT $$@
	$$(Q)$$(EMULATOR) $$(L$(2)_OUT)/plot $$(L$(2)_OUT)/$(3).dat
	$$(Q)gnuplot -e "data='$$(L$(2)_OUT)/$(3).dat'; output='$$@'" $(1)/plot.gp

LESSON_PROGRAMS += $$(L$(2)_OUT)/plot
PLOTS += $$(L$(2)_OUT)/$(3).png
PLOT_$(2) += $$(L$(2)_OUT)/$(3).png
endif

ifneq ($(wildcard $(1)/bench.c),)
# The benchmark: `make lessonN bench` runs it; with bench.gp, its data is also plotted.
$(call obj,$(1)/bench.c): ALL_CFLAGS += $$(BENCH_CFLAGS)
$$(L$(2)_OUT)/bench: $(call obj,$(1)/bench.c) $(BENCH_OBJ) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(BENCH_LIBS) $$(LDLIBS) -o $$@

LESSON_PROGRAMS += $$(L$(2)_OUT)/bench
BENCHES += $$(L$(2)_OUT)/bench
BENCH_$(2) := $$(L$(2)_OUT)/bench
ifneq ($(wildcard $(1)/bench.gp),)
# Its plot is drawn by `make bench-plots`, which runs the benchmarks one at a time.
BENCH_PLOT_SPECS += $(2):$(3):$(1)
BENCH_PLOT_$(2) := $(2):$(3):$(1)
endif
endif

# The exercise table without anyone's answers: the tests linked against generated TODO stubs.
# The graders list a lesson's exercises (ids, titles, points) with it.
$$(L$(2)_OUT)/stubs.c: $(1)/exercises.h tests/stubs.sh
	@mkdir -p $$(@D)
	$$(Q)sh tests/stubs.sh $$< > $$@
$$(L$(2)_OUT)/stubs.o: $$(L$(2)_OUT)/stubs.c
	$$(Q)$$(CC) -I$(1) $$(ALL_CFLAGS) -Wno-unused-parameter -c $$< -o $$@
$$(L$(2)_OUT)/list_exercises: $(call obj,$(1)/test_exercises.c) $$(L$(2)_OUT)/stubs.o $(HARNESS) $$(L$(2)_LIBRARY)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(CHECK_LIBS) $$(LDLIBS) -o $$@

# The grader's halves (docs/instructors.md): the judge, the lesson's tests linked with
# test_calls.c's stand-ins (course code only), and test_calls.c again for the runner, which
# grade.sh links with a student's file inside the sandbox.
$(call obj,$(1)/test_calls.c): | deps
$(call obj,$(1)/test_calls.c): ALL_CFLAGS += $$(CHECK_CFLAGS)
$(BUILD)/grader/lesson$(2)/judge: $(call obj,$(1)/test_exercises.c $(1)/test_calls.c) $(HARNESS) $(LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(CHECK_LIBS) $$(LDLIBS) -o $$@
$(BUILD)/grader/lesson$(2)/calls.o: $(1)/test_calls.c
	@mkdir -p $$(@D)
	$$(say) CC $$@
	$$(Q)$$(CC) $$(ALL_CFLAGS) -DCOURSE_RUNNER -c $$< -o $$@
GRADER_PROGRAMS += $(BUILD)/grader/lesson$(2)/judge $(BUILD)/grader/lesson$(2)/calls.o

LESSON_PROGRAMS += $$(L$(2)_OUT)/walkthrough $$(L$(2)_OUT)/test_core $$(L$(2)_OUT)/test_exercises
ALL_CORE_TESTS += $$(L$(2)_OUT)/test_core
ifneq ($(wildcard $(1)/solutions.c),)
LESSON_PROGRAMS += $$(L$(2)_OUT)/test_solutions
ALL_SOLUTION_TESTS += $$(L$(2)_OUT)/test_solutions
endif
LISTERS += $$(L$(2)_OUT)/list_exercises

.PHONY: lesson$(2) $(3)
ifeq ($(VERB_GIVEN),)
lesson$(2) $(3): $$(L$(2)_OUT)/walkthrough
	@$$(EMULATOR) "$$(abspath $$<)"
else
lesson$(2) $(3):
	@:
endif
endef

$(foreach d,$(LESSON_DIRS),$(eval $(call LESSON_RULES,$(d),$(call lesson_number,$(d)),$(call lesson_topic,$(d)))))

# The direction, checked by `make test` with the include path each lesson compiles with: its
# own header is found, the next lesson's is not. $(1) = a lesson, $(2) = the next one.
direction_includes = $(L$(call lesson_number,$(1))_INCLUDES)
define direction_check
printf '\043include "%s.h"\n' $(call lesson_topic,$(1)) | $(CC) $(call direction_includes,$(1)) -fsyntax-only -x c - || \
    { echo "include direction: lesson $(call lesson_number,$(1)) cannot include its own $(call lesson_topic,$(1)).h"; exit 1; }; \
if printf '\043include "%s.h"\n' $(call lesson_topic,$(2)) | $(CC) $(call direction_includes,$(1)) -fsyntax-only -x c - 2>/dev/null; then \
    echo "include direction: lesson $(call lesson_number,$(1)) can include lesson $(call lesson_number,$(2))'s $(call lesson_topic,$(2)).h"; exit 1; fi;
endef
LESSON_PAIRS := $(join $(filter-out $(lastword $(LESSON_DIRS)),$(LESSON_DIRS)),$(addprefix :,$(wordlist 2,99,$(LESSON_DIRS))))
check-direction:
	@$(foreach pair,$(LESSON_PAIRS),$(call direction_check,$(firstword $(subst :, ,$(pair))),$(lastword $(subst :, ,$(pair)))))
	@echo "include direction: each of lessons 1-$(words $(LESSON_DIRS)) compiles with common/, tests/ and the lessons before it; the next lesson's header is not found"

# ---- pictures of memory ----------------------------------------------------------------------
# A lesson with diagram.c has pictures: `diagram NAME FILE` writes the cells of picture NAME,
# asked of the library as it runs, and diagram-NAME.gp draws them (headless, PNG) into
# $(BUILD)/lessonN/TOPIC-NAME.png. They are plots (make plots, make lessonN plot, make docs)
# that run no benchmark; `make diagrams` (or `make lessonN diagrams`) draws only them.
define DIAGRAM_RULES
# $(1) = directory, $(2) = number, $(3) = topic
$$(L$(2)_OUT)/diagram: $(call obj,$(1)/diagram.c) $$(L$(2)_LIBRARY)
	@mkdir -p $$(@D)
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@

L$(2)_DIAGRAMS := $$(patsubst $(1)/diagram-%.gp,$$(L$(2)_OUT)/$(3)-%.png,$$(wildcard $(1)/diagram-*.gp))
$$(L$(2)_DIAGRAMS): $$(L$(2)_OUT)/$(3)-%.png: $$(L$(2)_OUT)/diagram $(1)/diagram-%.gp common/diagram.gp | plot-deps
	$$(say) PLOT $$@
	$$(Q)$$(EMULATOR) $$(L$(2)_OUT)/diagram $$* $$(L$(2)_OUT)/$(3)-$$*.dat
	$$(Q)gnuplot -e "data='$$(L$(2)_OUT)/$(3)-$$*.dat'; output='$$@'" $(1)/diagram-$$*.gp

LESSON_PROGRAMS += $$(L$(2)_OUT)/diagram
PLOTS += $$(L$(2)_DIAGRAMS)
PLOT_$(2) += $$(L$(2)_DIAGRAMS)
DIAGRAMS += $$(L$(2)_DIAGRAMS)
DIAGRAMS_$(2) := $$(L$(2)_DIAGRAMS)
endef
$(foreach d,$(LESSON_DIRS),$(if $(wildcard $(d)/diagram.c),$(eval $(call DIAGRAM_RULES,$(d),$(call lesson_number,$(d)),$(call lesson_topic,$(d))))))

ifeq ($(SELECTED),)
diagrams: $(DIAGRAMS)
	@for p in $^; do echo "wrote $$p"; done
else
diagrams: $(foreach d,$(SELECTED),$(DIAGRAMS_$(call lesson_number,$(d))))
	@for d in $(SELECTED); do [ -f $$d/diagram.c ] || echo "$$d has no diagrams"; done
	@for p in $^; do echo "wrote $$p"; done
endif

all: $(LIBRARY) $(LIBRARY_TESTS) $(LESSON_PROGRAMS)

# ---- tests -------------------------------------------------------------------------------
# `make test`: the tensor core's tests, every lesson's core tests, every exercise test against
# the student's files and against the reference solutions.
# `make lessonN test`: lesson N's core tests and its exercise tests against the student's file.
# The student's exercise programs are built inside tests/run.sh, so that one lesson's file
# that does not compile costs only that lesson's exercises. (run.sh gets make's name through
# SUBMAKE: a recipe that names $(MAKE) itself would run even under `make -n`.)
SUBMAKE := $(MAKE)
ifeq ($(SELECTED),)
test check: $(LIBRARY) $(LIBRARY_TESTS) $(ALL_CORE_TESTS) $(ALL_SOLUTION_TESTS) | check-direction
	@BUILD='$(BUILD)' MAKE='$(SUBMAKE)' V='$(V)' EMULATOR='$(EMULATOR)' sh tests/run.sh all $(foreach d,$(LESSON_DIRS),$(call lesson_spec,$(d)))
else
test check: $(foreach d,$(SELECTED),$(BUILD)/lesson$(call lesson_number,$(d))/test_core)
	@BUILD='$(BUILD)' MAKE='$(SUBMAKE)' V='$(V)' EMULATOR='$(EMULATOR)' sh tests/run.sh student $(foreach d,$(SELECTED),$(call lesson_spec,$(d)))
endif

# `make golden` regenerates the conformance suite's data (tests/golden/) with numpy and PyTorch.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
golden:
	@PYTHON='$(PYTHON)' sh tests/ensure-deps.sh golden
	$(PYTHON) tests/golden/generate.py tests/golden

# `make memcheck`: every walk-through and test program under valgrind, no error and no leak.
memcheck: $(LIBRARY) $(LIBRARY_TESTS) $(ALL_CORE_TESTS) $(ALL_SOLUTION_TESTS) $(WALKTHROUGHS)
	@sh tests/ensure-deps.sh valgrind
	@BUILD='$(BUILD)' sh tests/memcheck.sh $(WALKTHROUGHS) $(LIBRARY_TESTS) $(ALL_CORE_TESTS) $(ALL_SOLUTION_TESTS)

# The walk-through output quoted in docs/ is copied from the programs, never typed in, and so
# is each page's benchmark run (minutes; DOCS_BENCH=none leaves those as they are,
# DOCS_BENCH="4 7" reruns lessons 4 and 7's alone).
docs: $(WALKTHROUGHS) $(PLOTS) $(BENCHES)
	@BUILD='$(BUILD)' EMULATOR='$(EMULATOR)' DOCS_BENCH='$(DOCS_BENCH)' sh tests/docs.sh update
	@mkdir -p docs/img
	@for d in $(LESSON_DIRS); do n=$${d#lessons/}; n=$${n%%-*}; \
	    for png in $(BUILD)/lesson$$n/*.png; do [ -f "$$png" ] || continue; \
	    cp "$$png" docs/img/$$n-$${png##*/}; echo "copied docs/img/$$n-$${png##*/}"; done; done
check-docs: $(WALKTHROUGHS)
	@BUILD='$(BUILD)' EMULATOR='$(EMULATOR)' sh tests/docs.sh check
	@sh tests/test_docs.sh

# `make plots` (or `make plot`): every lesson's plot. `make lessonN plot`: lesson N's. No
# benchmark runs for them: the benchmarks' plots are `make bench-plots`.
ifeq ($(SELECTED),)
plot plots: $(PLOTS)
	@for p in $^; do echo "wrote $$p"; done
else
SELECTED_PLOTS := $(foreach d,$(SELECTED),$(PLOT_$(call lesson_number,$(d))))
plot plots: $(SELECTED_PLOTS)
	@for d in $(SELECTED); do [ -f $$d/plot.c ] || [ -f $$d/diagram.c ] || echo "$$d has no plot"; done
	@for p in $^; do echo "wrote $$p"; done
endif

# `make bench-plots`: run each benchmark that has a bench.gp and plot its data; `make lessonN
# bench-plots`: lesson N's. One recipe, so that two benchmarks never run at once under -j.
BENCH_PLOTS_WANTED := $(if $(SELECTED),$(foreach d,$(SELECTED),$(BENCH_PLOT_$(call lesson_number,$(d)))),$(BENCH_PLOT_SPECS))
bench-plots: $(foreach s,$(BENCH_PLOTS_WANTED),$(BUILD)/lesson$(firstword $(subst :, ,$(s)))/bench) | plot-deps
	@for d in $(SELECTED); do [ -f $$d/bench.gp ] || echo "$$d has no benchmark plot"; done
	@for spec in $(BENCH_PLOTS_WANTED); do \
	    n=$${spec%%:*} rest=$${spec#*:}; topic=$${rest%%:*} dir=$${rest#*:}; out=$(BUILD)/lesson$$n; \
	    echo "  BENCH $$out/$$topic-bench.dat"; \
	    $(EMULATOR) $$out/bench $(BENCH_FLAGS) --data $$out/$$topic-bench.dat >$$out/bench.txt || { cat $$out/bench.txt; exit 1; }; \
	    gnuplot -e "data='$$out/$$topic-bench.dat'; output='$$out/$$topic-bench.png'" $$dir/bench.gp || exit 1; \
	    echo "wrote $$out/$$topic-bench.png"; \
	done

# `make bench`: every lesson's benchmark, one after the other (under a minute in all);
# `make lessonN bench`: lesson N's. BENCH_FLAGS=--quick makes it a smoke run.
ifeq ($(SELECTED),)
bench: $(BENCHES)
	@for b in $^; do $(EMULATOR) $$b $(BENCH_FLAGS) || exit 1; echo; done
else
bench: $(foreach d,$(SELECTED),$(BENCH_$(call lesson_number,$(d))))
	@for d in $(SELECTED); do [ -f $$d/bench.c ] || echo "$$d has no benchmark"; done
	@for b in $^; do $(EMULATOR) $$b $(BENCH_FLAGS) || exit 1; echo; done
endif

# ---- grading (docs/instructors.md) ---------------------------------------------------------
# make grade [SUBMISSION=DIR] [LESSON=N] [EXERCISE=ID] [RESULTS=FILE] [STRICT=1]: one
# submission (default: this checkout); make grade-all SUBMISSIONS=DIR [GRADEBOOK=DIR] [LESSON=N]:
# every subdirectory of DIR. Both refuse without a sandbox (tests/sandbox.c) unless
# UNSANDBOXED=1 (practice, not credit). Students' files are compiled without -Werror, whatever
# WERROR says, but for a call without a declaration (STUDENT_WARNINGS). make grade succeeds
# whenever it graded, whatever the score, and its last line is the score; STRICT=1 (or
# tests/grade.sh itself) fails unless every graded exercise passed. Could not grade: it fails.
# The sandbox (tests/sandbox.c) needs libseccomp; bubblewrap, for namespaces, is installed as
# root and only recommended otherwise.
SANDBOX := $(BUILD)/grader/sandbox
RUNNER_OBJ := $(call obj,tests/runner.c)
$(SANDBOX): tests/sandbox.c | grader-deps
	@mkdir -p $(@D)
	$(say) LINK $@
	$(Q)$(CC) $(WARNINGS) -O2 -g $< -lseccomp -o $@ # never sanitized: it sets the limits a sanitizer's runtime would trip on
grader-deps:
	@sh tests/ensure-deps.sh grader
grade-prereqs: $(LIBRARY) $(HARNESS) $(LISTERS) $(SANDBOX) $(RUNNER_OBJ) $(GRADER_PROGRAMS)
# A student's file is compiled against copies of the course's headers only (HEADERS, and the
# lesson's exercises.h): no -I into the lessons, where solutions.c is.
grade-env:
	@echo "CC='$(CC)'"
	@echo "STUDENT_FLAGS='$(STUDENT_WARNINGS) $(CFLAGS)'"
	@echo "HEADERS='$(wildcard common/*.h) tests/exercise.h $(filter-out %/exercises.h,$(wildcard $(addsuffix /*.h,$(LESSON_DIRS))))'"
	@echo "LINK_FLAGS='$(CFLAGS)$(if $(filter 1,$(SANITIZE)),, -static)'"
	@echo "LIBS='$(LDLIBS)'"
	@echo "SANDBOX='$(SANDBOX)'"
	@echo "RUNNER_OBJ='$(RUNNER_OBJ)'"
	@echo "GRADER='$(BUILD)/grader'"
grade: | deps
	@BUILD='$(BUILD)' MAKE='$(SUBMAKE)' SANITIZE='$(SANITIZE)' sh tests/grade.sh --submission '$(or $(SUBMISSION),.)' \
	    $(if $(LESSON),--lesson '$(LESSON)') $(if $(EXERCISE),--exercise '$(EXERCISE)') \
	    $(if $(RESULTS),--results '$(RESULTS)') $(if $(filter 1,$(UNSANDBOXED)),--unsandboxed) \
	    $(if $(filter 1,$(STRICT)),,--exit-zero-if-graded)
grade-all: | deps
	@test -n '$(SUBMISSIONS)' || { echo "make grade-all needs SUBMISSIONS=DIR (one subdirectory per student)"; exit 2; }
	@BUILD='$(BUILD)' MAKE='$(SUBMAKE)' SANITIZE='$(SANITIZE)' $(if $(filter 1,$(UNSANDBOXED)),GRADE_UNSANDBOXED=1) \
	    sh tests/grade-all.sh --submissions '$(SUBMISSIONS)' $(if $(LESSON),--lesson '$(LESSON)') \
	    --out '$(or $(GRADEBOOK),$(BUILD)/gradebook)'

# make handout: the course for students, without the reference solutions (tests/handout.sh).
handout:
	@sh tests/handout.sh $(BUILD)/handout

# make gradescope: the autograder zip, made from the handout (tests/gradescope.sh).
gradescope:
	@sh tests/ensure-deps.sh zip
	@sh tests/gradescope.sh $(BUILD)/gradescope

# make test-grader: the grader's suites: its own tests, the agreement of its verdicts with make
# test's on known-wrong answers, the hostile submissions, and the Gradescope zip run end to end
# (make test runs none of them). CI runs it.
GRADER_SUITES = test_grader test_agreement test_hostile test_gradescope
test-grader: | deps grader-deps
	@status=0; for suite in $(GRADER_SUITES); do \
	    echo "==== the grader: tests/grading/$$suite.sh"; \
	    BUILD='$(BUILD)' MAKE='$(SUBMAKE)' sh tests/grading/$$suite.sh || status=1; \
	done; \
	if [ $$status = 0 ]; then echo "grader: every suite passed ($(GRADER_SUITES))"; else echo "grader: a suite FAILED"; fi; \
	exit $$status

clean:
	rm -rf $(BUILD)

help:
	@echo "make                 build the library, every walk-through and every test program"
	@echo "make lessonN         run lesson N's walk-through (also by topic, e.g. make broadcast)"
	@echo "make lessonN test    run lesson N's core tests and your exercises for it"
	@echo "make test            run every test: the library's, your exercises$(if $(wildcard lessons/*/solutions.c),$(comma) the reference solutions) (V=1: every line)"
	@echo "make plots           draw every lesson's plots and pictures of memory (make lessonN plot: lesson N's), PNG in $(BUILD)/lessonN/; no benchmarks"
	@echo "make diagrams        draw only the pictures of memory (make lessonN diagrams: lesson N's)"
	@echo "make bench           run every lesson's benchmark (make lessonN bench: lesson N's; BENCH_FLAGS=--quick)"
	@echo "make bench-plots     run the benchmarks that have a plot, one at a time, and draw them (also per lesson)"
	@echo "make memcheck        run every walk-through and test program under valgrind (no error, no leak)"
	@echo "make golden          regenerate tests/golden/ (numpy and PyTorch's answers) with PYTHON=$(PYTHON)"
	@echo "make docs            copy the walk-throughs' output, the plots and a run of each benchmark into docs/ (DOCS_BENCH=none: no benchmarks; make check-docs compares)"
	@echo "make grade           grade this checkout's exercises (SUBMISSION=DIR, LESSON=N, EXERCISE=ID, RESULTS=FILE, STRICT=1)"
	@echo "make grade-all       grade every student in SUBMISSIONS=DIR, write a gradebook (GRADEBOOK=DIR, LESSON=N)"
ifneq ($(wildcard tests/grading),) # the course's repository, not the student handout
	@echo "make handout         the course without the reference solutions, for students"
	@echo "make gradescope      the autograder zip for Gradescope (made from the handout)"
	@echo "make test-grader     the grader's own tests, its agreement with make test, the hostile submissions, the Gradescope zip end to end"
endif
	@echo "make clean           remove $(BUILD)/"
	@echo "Lessons:$(foreach d,$(LESSON_DIRS), lesson$(call lesson_number,$(d))=$(call lesson_topic,$(d)))"
	@echo "Variables: V=1 (show commands and every test), -j1 (one core; default: all), CC=clang, CFLAGS='-O0 -g', WERROR=1, SANITIZE=1 (ASan+UBSan), BUILD=dir, COURSE_SEED=n"

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
