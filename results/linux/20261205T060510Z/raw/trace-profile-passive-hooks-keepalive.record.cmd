/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T060510Z/raw/trace-profile-passive-hooks-keepalive.perf.data -p 4486,4487
