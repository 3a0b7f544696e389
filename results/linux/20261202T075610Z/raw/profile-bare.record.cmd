/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T075610Z/raw/profile-bare.perf.data -p 6213,6214
