/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T060510Z/raw/profile-nginx.perf.data -p 6174,6175
