/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T003039Z/raw/profile-nginx.perf.data -p 1658,1659
