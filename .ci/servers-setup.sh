#!/usr/bin/env bash
# Starts the local PostgreSQL and Redis the store tests use, if they are not
# running, and makes the test database. Idempotent.
set -euo pipefail
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
	pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
	for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
fi
pg_isready -h 127.0.0.1 -p 5432
if ! psql -h 127.0.0.1 -U root -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1; then
	psql -h 127.0.0.1 -U root -d postgres -c "CREATE DATABASE test"
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
	mkdir -p /var/lib/redis /var/log/redis
	redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
		--dir /var/lib/redis --logfile /var/log/redis/ci.log
	for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping
