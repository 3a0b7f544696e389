/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T181045Z/raw/profile-nginx.perf.data -p 9455,9456
