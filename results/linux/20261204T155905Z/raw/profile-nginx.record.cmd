/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T155905Z/raw/profile-nginx.perf.data -p 8313,8314
