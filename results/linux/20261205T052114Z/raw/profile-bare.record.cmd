/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T052114Z/raw/profile-bare.perf.data -p 21135,21136
