/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T024423Z/raw/profile-nginx.perf.data -p 32227,32228
