/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T085915Z/raw/profile-nginx.perf.data -p 7384,7385
