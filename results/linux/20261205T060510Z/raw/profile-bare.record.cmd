/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T060510Z/raw/profile-bare.perf.data -p 6157,6158
