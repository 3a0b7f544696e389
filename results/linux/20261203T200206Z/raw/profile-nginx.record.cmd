/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T200206Z/raw/profile-nginx.perf.data -p 18280,18281
