/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T081814Z/raw/profile-bare.perf.data -p 18379,18380
