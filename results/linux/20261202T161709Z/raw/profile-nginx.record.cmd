/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T161709Z/raw/profile-nginx.perf.data -p 30938,30939
