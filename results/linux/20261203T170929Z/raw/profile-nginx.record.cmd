/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T170929Z/raw/profile-nginx.perf.data -p 28803,28804
