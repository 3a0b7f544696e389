/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T161709Z/raw/profile-bare.perf.data -p 30921,30922
