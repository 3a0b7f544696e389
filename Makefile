# acceptlab: the front door. `make` builds, `make test` runs every test,
# `make measure PLATFORM=linux` runs the campaign, `make report` re-derives
# report/linux.md from the committed run. Quiet unless V=1.

# The Python entry points are modules run from here, the repository's top
# ($(PYTHON) -m probes.campaign ...): no PYTHONPATH, no sys.path edits.
PYTHON ?= /usr/bin/python3
CC := gcc
CLANG ?= clang
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE
SAN := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
PLATFORM ?=
QUICK ?=

ifeq ($(V),1)
Q :=
else
Q := @
endif

SERVER_SRC := servers/main.c servers/supervisor.c servers/threads.c servers/worker.c servers/accept.c \
	servers/conn.c servers/own_epoll.c servers/shared_epoll.c servers/app.c servers/http.c servers/net.c servers/util.c servers/scm_rights.c \
	servers/conn_queue.c servers/load.c servers/variants.c $(wildcard servers/variants/*.c)
# BPF programs the server loads (libbpf CO-RE skeletons, generated into build/).
SERVER_BPF := worker_load
SERVER_SKELS := $(patsubst %,build/%.skel.h,$(SERVER_BPF))
SERVER_HDR := $(wildcard servers/*.h) $(wildcard ebpf/*.h) $(SERVER_SKELS) common/cli.h
SERVER_LIBS := -lbpf -lelf -lz -pthread
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I/usr/include/$(shell uname -m)-linux-gnu -Iebpf -Ibuild
# The tracer (CO-RE): its types come from the running kernel's BTF.
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
# Its loader (lifecycle and options), /proc target discovery and printers.
TRACE_SRC := ebpf/acceptlab_trace.c ebpf/targets.c ebpf/trace_print.c ebpf/tracefs.c ebpf/detach.c ebpf/slots.c
TRACE_HDR := ebpf/acceptlab_trace.h ebpf/waits.h ebpf/targets.h ebpf/trace_print.h ebpf/tracefs.h ebpf/detach.h ebpf/slots.h common/cli.h build/acceptlab_trace.skel.h
# The diagnosis (any running server, by port): detection from /proc and
# sock_diag, the reuseport selector, its own BPF object, the classification
# and the printers.
DIAG_SRC := ebpf/acceptlab_diagnose.c ebpf/detect.c ebpf/selector.c ebpf/diagnosis.c ebpf/diagnose_print.c \
	ebpf/targets.c ebpf/tracefs.c ebpf/detach.c ebpf/slots.c ebpf/advice.c common/fair_split.c
DIAG_HDR := ebpf/acceptlab_diagnose.h ebpf/waits.h ebpf/advice.h ebpf/detect.h ebpf/selector.h ebpf/diagnosis.h \
	ebpf/diagnose_print.h ebpf/listener_iter.h ebpf/targets.h ebpf/tracefs.h ebpf/detach.h ebpf/slots.h common/cli.h common/fair_split.h \
	build/acceptlab_diagnose.skel.h build/listener_iter.skel.h
PROBE_SRC := probes/probe.c probes/ready_line.c probes/response.c probes/stop_winner.c probes/timing.c
PROBE_HDR := $(wildcard probes/*.h) common/cli.h

BINS := bin/acceptlab-server bin/acceptlab-probe bin/acceptlab-trace bin/acceptlab-diagnose
# The mechanism models (models/): no HTTP, one file each.
MODEL_BINS := bin/reuseport-model bin/exclusive-model
BINS += $(MODEL_BINS)
TEST_BINS := build/test_http build/test_response build/server-asan build/test_conn_queue build/test_conn_queue_tsan \
	build/test_shared_epoll build/test_fair_split build/test_advice

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test test-stress gate measure report bench soak fuzz clean check-platform install deb diagnose census

all: deps $(BINS)

deps:
	$(Q)sh ci/deps.sh

bin/acceptlab-server: $(SERVER_SRC) $(SERVER_HDR) | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) -Ibuild -Iebpf $(SERVER_SRC) $(SERVER_LIBS) -o $@

build/%.bpf.o: ebpf/%.bpf.c $(wildcard ebpf/*.h) | build
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

build/vmlinux.h: | build
	@echo "  BTF     $@"
	$(Q)test -r $(VMLINUX_BTF) || { echo "make: $(VMLINUX_BTF) is missing: this kernel has no BTF, the tracer cannot be built" >&2; exit 1; }
	$(Q)bpftool btf dump file $(VMLINUX_BTF) format c > $@

build/acceptlab_trace.bpf.o build/worker_load.bpf.o build/acceptlab_diagnose.bpf.o build/listener_iter.bpf.o: build/vmlinux.h

bin/acceptlab-trace: $(TRACE_SRC) $(TRACE_HDR) | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) -Ibuild -Iebpf $(TRACE_SRC) -lbpf -lelf -lz -o $@

bin/acceptlab-diagnose: $(DIAG_SRC) $(DIAG_HDR) | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) -Ibuild -Iebpf $(DIAG_SRC) -lbpf -lelf -lz -lm -o $@

build/%.skel.h: build/%.bpf.o
	@echo "  GEN-SKEL $@"
	$(Q)bpftool gen skeleton $< > $@

bin/acceptlab-probe: $(PROBE_SRC) $(PROBE_HDR) | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) $(PROBE_SRC) -lm -o $@

bin/reuseport-model: models/reuseport_model.c common/cli.h | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) $< -o $@

bin/exclusive-model: models/exclusive_model.c common/cli.h | bin
	@echo "  CC      $@"
	$(Q)$(CC) $(WARN) $(CFLAGS) $< -lm -o $@

# The parsers' unit tests and a whole server, under ASan/UBSan.
build/test_http: tests/c/test_http.c tests/c/check.h servers/http.c servers/http.h | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Iservers tests/c/test_http.c servers/http.c -o $@

build/test_response: tests/c/test_response.c tests/c/check.h probes/response.c probes/response.h | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Iprobes tests/c/test_response.c probes/response.c -o $@

# The connection queues and the hand-off policy: under ASan/UBSan, and again
# under TSan for the threaded cases (the two sanitizers cannot share one binary).
build/test_conn_queue: tests/c/test_conn_queue.c tests/c/check.h servers/conn_queue.c servers/conn_queue.h | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -pthread -Iservers tests/c/test_conn_queue.c servers/conn_queue.c -o $@

build/test_conn_queue_tsan: tests/c/test_conn_queue.c tests/c/check.h servers/conn_queue.c servers/conn_queue.h | build
	@echo "  CC-TSAN $@"
	$(Q)$(CC) $(WARN) -fsanitize=thread -g -O1 -pthread -Iservers tests/c/test_conn_queue.c servers/conn_queue.c -o $@

# The exact chances of a fair split (common/fair_split.c), under ASan/UBSan.
build/test_fair_split: tests/c/test_fair_split.c tests/c/check.h common/fair_split.c common/fair_split.h | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Icommon tests/c/test_fair_split.c common/fair_split.c -lm -o $@

# The diagnosis's advice file parser (ebpf/advice.c), under ASan/UBSan.
build/test_advice: tests/c/test_advice.c tests/c/check.h ebpf/advice.c ebpf/advice.h | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Iebpf -Itests/c tests/c/test_advice.c ebpf/advice.c -o $@

build/server-asan: $(SERVER_SRC) $(SERVER_HDR) | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Ibuild -Iebpf $(SERVER_SRC) $(SERVER_LIBS) -o $@

# --shared-epoll's listener stall after EMFILE, replayed in one thread under
# ASan/UBSan. The test #includes servers/accept.c and servers/shared_epoll.c
# (to reach their statics), so it links every other server source but main.c.
build/test_shared_epoll: tests/c/test_shared_epoll.c tests/c/check.h $(SERVER_SRC) $(SERVER_HDR) | build
	@echo "  CC-SAN  $@"
	$(Q)$(CC) $(WARN) $(SAN) -Ibuild -Iebpf tests/c/test_shared_epoll.c \
		$(filter-out servers/main.c servers/accept.c servers/shared_epoll.c,$(SERVER_SRC)) $(SERVER_LIBS) -o $@

# libFuzzer target for the request parser (clang); the tests run it briefly.
build/fuzz_http: tests/fuzz/fuzz_http.c servers/http.c servers/http.h | build
	@echo "  FUZZ    $@"
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -Iservers tests/fuzz/fuzz_http.c servers/http.c -o $@

bin build:
	$(Q)mkdir -p $@

# The fault tests run once, in the suite (tests/test_fdpass.py); the gate
# after it holds the balancers to their target (`make gate` runs the faults
# too). -rs lists every skip with its reason; tests/conftest.py ends the
# suite's output with the skips counted by reason.
test: all $(TEST_BINS) build/fuzz_http
	$(Q)$(PYTHON) -m pytest -q -rs tests
	$(Q)$(PYTHON) -m ci.gate --no-faults

# The whole suite (tests and gate) on a busy machine: beside two CPU hogs
# (stress-ng --cpu 2) for its whole length; the hogs stop however it ends.
test-stress: all $(TEST_BINS) build/fuzz_http
	$(Q)command -v stress-ng >/dev/null || { echo "test-stress: stress-ng is missing (make deps installs it, as root)" >&2; exit 2; }
	$(Q)stress-ng --cpu 2 --timeout 7200 --quiet & hogs=$$!; \
	trap 'kill $$hogs 2>/dev/null; wait $$hogs 2>/dev/null' EXIT INT TERM; \
	echo "test-stress: the suite beside stress-ng --cpu 2 (pid $$hogs)"; \
	$(PYTHON) -m pytest -q tests && $(PYTHON) -m ci.gate --no-faults

# The balancing variants within their target on every round (the design
# notes' 2:1 beside it), and the fault invariants.
gate: all
	$(Q)$(PYTHON) -m ci.gate

check-platform:
	@if [ "$(PLATFORM)" != "linux" ]; then \
		echo "measure: PLATFORM=$(if $(PLATFORM),$(PLATFORM),<unset>) is not supported; use PLATFORM=linux" >&2; \
		exit 2; \
	fi

measure: check-platform all
	$(Q)$(PYTHON) -m probes.campaign --platform $(PLATFORM) $(if $(QUICK),--quick) $(if $(COST_METHOD),--cost-method $(COST_METHOD))
	$(Q)$(PYTHON) -m report.report
	$(Q)$(PYTHON) -m report.quicklook --run-dir results/linux/$$(cat results/linux/CANONICAL)

report:
	$(Q)$(PYTHON) -m report.report

# Load without errors: every variant answers 1,000,000 keep-alive and 100,000
# Connection: close requests (wrk, in chunks, bounded per arm); build/soak/.
soak: all
	$(Q)$(PYTHON) -m probes.soak

# libFuzzer on the HTTP parser for FUZZ_SECONDS (default 300); new inputs go
# to build/fuzz-corpus, crashes to build/fuzz-artifacts/.
FUZZ_SECONDS ?= 300
fuzz: build/fuzz_http
	$(Q)mkdir -p build/fuzz-corpus build/fuzz-artifacts
	$(Q)cp -n tests/fuzz/corpus_http/* tests/fuzz/regressions/* build/fuzz-corpus/ 2>/dev/null || true
	$(Q)build/fuzz_http -max_total_time=$(FUZZ_SECONDS) -max_len=12000 -artifact_prefix=build/fuzz-artifacts/ build/fuzz-corpus

# The wrk studies (cost, throughput, payoff, trace_overhead), the burst study and balancing
# at 2, 4, 8 and 16 workers, into build/bench/<stamp>/, and their tables in
# build/bench/linux.md; results/ and CANONICAL are left alone. The stamp is the newest run directory (stamps sort by time). cost and
# trace_overhead repeat rounds until every CPU ratio's 95 % interval is within
# 0.01 of its mean (the A/A floor's goal under make bench), at most BENCH_MAX_ROUNDS
# rounds (the report names what did
# not converge). BENCH_STUDIES runs a slice of them (make bench
# BENCH_STUDIES=cost,trace_overhead: the two A/A floors alone).
BENCH_MAX_ROUNDS ?= 40
BENCH_STUDIES ?= balancing,cost,throughput,payoff,burst,trace_overhead,census
bench: all
	$(Q)$(PYTHON) -m probes.campaign --platform linux --studies $(BENCH_STUDIES) --worker-counts 2,4,8,16 --bench-arms all --bench-seconds 6 --bench-rounds 6 --bench-within 0.01 --bench-max-rounds $(BENCH_MAX_ROUNDS) $(if $(COST_METHOD),--cost-method $(COST_METHOD)) --results-dir build/bench --no-canonical
	$(Q)stamp=$$(ls -1 build/bench | grep -E '^[0-9]{8}T[0-9]{6}Z$$' | sort | tail -n 1); \
	$(PYTHON) -m report.report --results-dir build/bench --out build/bench/linux.md --run "$$stamp" && \
	echo "bench: tables in build/bench/linux.md (run build/bench/$$stamp)"

# The census (probes/studies/census.py, docs/census.md): every server
# software in probes/peers/software/ (nginx, HAProxy, Node, Apache, gunicorn,
# uWSGI, lighttpd, h2o, Caddy, Puma, Unicorn, php-fpm, Varnish) at 2 and 4
# workers, diagnosed by port and cross-checked against its own record, beside
# our variants' balancing rows at the same counts, into build/census/ (its
# tables in build/census/linux.md). `make measure` runs it at 2 workers.
census: all
	$(Q)$(PYTHON) -m probes.campaign --platform linux --studies balancing,census --worker-counts 2,4 --results-dir build/census --no-canonical
	$(Q)stamp=$$(ls -1 build/census | grep -E '^[0-9]{8}T[0-9]{6}Z$$' | sort | tail -n 1); \
	$(PYTHON) -m report.report --results-dir build/census --out build/census/linux.md --run "$$stamp" && \
	echo "census: tables in build/census/linux.md (run build/census/$$stamp)"

# The peers (probes/peers/): nginx x4, HAProxy x3 and a Node.js cluster x2 on
# loopback, measured by the probe (and traced as root) into
# results/peers/<UTC stamp>/peers.jsonl; `make measure` runs the same as its
# peers study. `make deps` installs nginx and haproxy when root; a peer that
# cannot be had is a row saying why.
.PHONY: peers
peers: all
	$(Q)$(PYTHON) -m probes.peers.peers measure --out results/peers/$$(date -u +%Y%m%dT%H%M%SZ)

# Installing where servers run. `make install PREFIX=/usr/local [DESTDIR=]`
# installs the programs a user runs on a server host, each with a man page
# made from its own --help (help2man), so the page cannot drift from the
# program, and the diagnosis's advice file. `make deb` builds the same as a Debian package,
# build/deb/acceptlab-tools_VERSION_ARCH.deb (ci/deb.sh), which depends on
# shared libraries only: no compiler, header or Python on the host.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_PROGRAMS := acceptlab-diagnose acceptlab-trace acceptlab-probe acceptlab-server
# The diagnosis's advice (report/advice.py's, from the CANONICAL run; `make
# report` writes it), installed as $(PREFIX)/share/acceptlab/advice.tsv,
# where acceptlab-diagnose looks for it (docs/diagnose.md). ADVICE=FILE
# installs another; without one the programs install and the diagnosis
# says it has no advice.
ADVICE ?= report/advice.tsv
VERSION := $(shell git log -1 --date=format:%Y%m%d --format=0.0~git%cd.%h 2>/dev/null || echo 0.0~unknown)
MAN_PAGES := $(patsubst %,build/man/%.1,$(INSTALL_PROGRAMS))
man_name_acceptlab-diagnose := which worker of a running server gets each connection, why, and what to change
man_name_acceptlab-trace := why each worker of a server won its connections (eBPF)
man_name_acceptlab-probe := ask which worker of a server answers each connection
man_name_acceptlab-server := the server harness: N workers behind one port, one accept variant

build/man/%.1: bin/% docs/man/see-also.h2m | build
	@mkdir -p build/man
	@echo "  MAN     $@"
	$(Q)help2man --no-info --no-discard-stderr --version-string=$(VERSION) -n "$(man_name_$*)" \
		--include=docs/man/see-also.h2m -o $@ bin/$*

install: $(addprefix bin/,$(INSTALL_PROGRAMS)) $(MAN_PAGES)
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	$(Q)install -m 755 $(addprefix bin/,$(INSTALL_PROGRAMS)) $(DESTDIR)$(PREFIX)/bin/
	$(Q)install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	$(Q)if [ -f "$(ADVICE)" ]; then \
		install -d $(DESTDIR)$(PREFIX)/share/acceptlab && \
		install -m 644 "$(ADVICE)" $(DESTDIR)$(PREFIX)/share/acceptlab/advice.tsv; \
	else \
		echo "install: $(ADVICE) is missing (make report writes it): acceptlab-diagnose will say it has no advice" >&2; \
	fi
	@echo "install: $(INSTALL_PROGRAMS), their man pages and the diagnosis's advice under $(DESTDIR)$(PREFIX)"

deb: $(addprefix bin/,$(INSTALL_PROGRAMS)) $(MAN_PAGES)
	$(Q)mkdir -p build/deb
	$(Q)VERSION='$(VERSION)' PROGRAMS='$(INSTALL_PROGRAMS)' sh ci/deb.sh build/deb

# Diagnose a running server: `make diagnose PORT=8080 [ARGS="--load burst"]`
# (root for the trace; docs/diagnose.md).
diagnose: bin/acceptlab-diagnose bin/acceptlab-probe
	$(Q)test -n "$(PORT)" || { echo "diagnose: give PORT=P (the server's TCP port)" >&2; exit 2; }
	$(Q)bin/acceptlab-diagnose --port $(PORT) $(ARGS)

clean:
	rm -rf bin build
