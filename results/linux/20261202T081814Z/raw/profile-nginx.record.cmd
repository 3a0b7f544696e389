/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T081814Z/raw/profile-nginx.perf.data -p 18396,18397
