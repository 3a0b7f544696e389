/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T085915Z/raw/profile-bare.perf.data -p 7367,7368
