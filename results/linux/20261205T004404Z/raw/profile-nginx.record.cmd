/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T004404Z/raw/profile-nginx.perf.data -p 4073,4074
