/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/wt/dev/results/linux/20261202T031104Z/raw/profile-nginx.perf.data -p 7064,7065
