/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T175459Z/raw/profile-nginx.perf.data -p 22147,22148
