/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T104620Z/raw/profile-bare.perf.data -p 30015,30016
