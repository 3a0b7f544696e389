/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T075610Z/raw/profile-nginx.perf.data -p 6230,6231
