/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T052114Z/raw/profile-nginx.perf.data -p 21152,21153
