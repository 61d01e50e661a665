#!/usr/bin/env bash
# A throwaway single-node Ceph cluster with the RADOS Gateway (RGW), a real S3 engine for the
# test suites: one monitor, one manager, one bluestore OSD on a sparse file, one radosgw, all on
# loopback, run as plain processes (no systemd, no containers) from the Debian packages
#   apt-get install --no-install-recommends ceph-mon ceph-osd ceph-mgr radosgw ceph-common
#
#   scripts/ceph-rgw.sh up       bring it up (or keep the one running), print the S3 variables
#   scripts/ceph-rgw.sh env      print the S3 variables of the running cluster
#   scripts/ceph-rgw.sh status   exit 0 when it is up and answering S3, 1 otherwise
#   scripts/ceph-rgw.sh down     stop its daemons and remove everything it wrote
#
# `eval "$(scripts/ceph-rgw.sh up)"` exports CAIRN_TEST_S3_ENDPOINT, CAIRN_TEST_S3_REGION,
# CAIRN_TEST_S3_ACCESS_KEY_ID and CAIRN_TEST_S3_SECRET_ACCESS_KEY, which point the S3 test suites
# at it (see test/helpers/test-s3.ts). Progress goes to stderr, the variables to stdout.
#
# Settings (environment):
#   CAIRN_CEPH_DIR        where the cluster lives: config, keys, the OSD's file (20 GiB, sparse),
#                         logs (default /var/tmp/cairn-ceph; never inside the repository)
#   CAIRN_CEPH_PORT_BASE  RGW listens on this port, the monitor on the next, the other daemons
#                         on the 40 after (default 7480)
#   CAIRN_CEPH_OSD_GIB    size of the OSD's file (default 20)
#
# `up` on a machine where it already ran keeps a cluster that still answers, and otherwise
# removes what is left (daemons it started, by their pid files; the folder) and starts afresh.
set -euo pipefail

DIR="${CAIRN_CEPH_DIR:-/var/tmp/cairn-ceph}"
BASE="${CAIRN_CEPH_PORT_BASE:-7480}"
OSD_GIB="${CAIRN_CEPH_OSD_GIB:-20}"
RGW_PORT="$BASE"
MON_PORT="$((BASE + 1))"
CONF="$DIR/ceph.conf"
ENV_FILE="$DIR/s3.env"
# What the daemons print before they detach (their own logs are $DIR/log/<name>.log).
DAEMON_LOG="$DIR/log/daemons.log"
REGION="us-east-1"
RGW_NAME="client.rgw.cairn"
RGW_USER="cairn-test"
# How long `up` waits for each daemon (a busy 2-core machine takes ~45 s for all of them).
WAIT_S=120

log() { printf '[ceph-rgw] %s\n' "$*" >&2; }
die() {
  printf '[ceph-rgw] ERROR: %s\n' "$*" >&2
  if [ -d "$DIR/log" ]; then
    for f in "$DIR"/log/*.log; do
      [ -s "$f" ] || continue
      printf '\n[ceph-rgw] --- last lines of %s ---\n' "$f" >&2
      tail -n 25 "$f" >&2
    done
  fi
  exit 1
}

case "$DIR" in
  /*) ;;
  *) die "CAIRN_CEPH_DIR must be an absolute path (got $DIR)" ;;
esac
if git -C "$(dirname "$0")" rev-parse --show-toplevel >/dev/null 2>&1; then
  repo="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
  case "$DIR/" in
    "$repo"/*) die "CAIRN_CEPH_DIR ($DIR) is inside the repository; put the cluster's data elsewhere" ;;
  esac
fi

ceph_() { ceph --conf "$CONF" --connect-timeout 10 "$@"; }

# The daemons this script started and still running, by the pid files their configuration
# names; a pid counts only if its process was started with this cluster's configuration (after a
# reboot the number may belong to anything).
daemon_pids() {
  local f pid
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f" 2>/dev/null || true)"
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || continue
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "--conf $CONF " && echo "$pid"
  done
  return 0
}

# Up: all four daemons running and RGW answering S3 with the cluster's key.
answering() {
  [ -f "$ENV_FILE" ] && [ "$(daemon_pids | wc -l)" -eq 4 ] && s3_answers
}

print_env() {
  [ -f "$ENV_FILE" ] || die "no cluster at $DIR (run: $0 up)"
  cat "$ENV_FILE"
}

# An S3 ListBuckets signed with the cluster's key, answered for its user: RGW is up (not some
# other server on the port) and the key works.
s3_answers() {
  [ -f "$ENV_FILE" ] || return 1
  local endpoint key secret
  endpoint="$(sed -n 's/^export CAIRN_TEST_S3_ENDPOINT=//p' "$ENV_FILE")"
  key="$(sed -n 's/^export CAIRN_TEST_S3_ACCESS_KEY_ID=//p' "$ENV_FILE")"
  secret="$(sed -n 's/^export CAIRN_TEST_S3_SECRET_ACCESS_KEY=//p' "$ENV_FILE")"
  # RGW checks the payload hash, which curl does not add by itself (this is the empty body's).
  curl -fsS --max-time 5 --aws-sigv4 "aws:amz:$REGION:s3" --user "$key:$secret" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' "$endpoint/" |
    grep -q "<ID>$RGW_USER</ID>"
}

# RGW's anonymous ListBuckets (before its user exists).
rgw_answers() {
  curl -fsS --max-time 5 "http://127.0.0.1:$RGW_PORT/" | grep -q '<ListAllMyBucketsResult'
}

stop_daemons() {
  local pids
  pids="$(daemon_pids)"
  [ -z "$pids" ] && return 0
  log "stopping daemons: $(echo $pids)"
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 1 30); do
    [ -z "$(daemon_pids)" ] && return 0
    sleep 1
  done
  pids="$(daemon_pids)"
  log "still running after 30 s, killing: $(echo $pids)"
  # shellcheck disable=SC2086
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
  sleep 1
}

down() {
  stop_daemons
  if [ -d "$DIR" ]; then
    log "removing $DIR"
    rm -rf "$DIR"
  fi
}

wait_for() { # what, command...
  local what="$1" started=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - started)) -lt "$WAIT_S" ] || die "$what did not come up within $WAIT_S s"
    sleep 1
  done
  log "$what: ok after $((SECONDS - started)) s"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

osd_up() { ceph_ osd stat -f json | grep -q '"num_up_osds":1'; }

# The manager's Python modules installed (folders of mgr_module_path) but for the always-on ones
# (`ceph mgr module ls`, Pacific).
optional_mgr_modules() {
  local path
  path="$(ceph-conf --show-config-value mgr_module_path 2>/dev/null || echo /usr/share/ceph/mgr)"
  find "$path" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | grep -vxE '__pycache__|balancer|crash|devicehealth|orchestrator|pg_autoscaler|progress|rbd_support|status|telemetry|volumes' | sort | paste -sd, -
}

write_conf() {
  local fsid="$1"
  cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$MON_PORT]
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_port_min = $((BASE + 2))
ms_bind_port_max = $((BASE + 41))
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
# Clients' keys (the daemons keep theirs in their data folders, below).
keyring = $DIR/\$name.keyring
run_dir = $DIR/run
pid_file = $DIR/run/\$name.pid
admin_socket = $DIR/run/\$name.asok
log_file = $DIR/log/\$name.log
log_to_stderr = false
err_to_stderr = false
mon_cluster_log_file = $DIR/log/cluster.log
# One OSD: one copy of everything, few placement groups, no warnings about either.
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_max_pg_per_osd = 1000
mon_data_avail_warn = 5
mon_data_avail_crit = 1

[mon]
mon_data = $DIR/mon/\$cluster-\$id
keyring = \$mon_data/keyring

[mgr]
mgr_data = $DIR/mgr/\$cluster-\$id
keyring = \$mgr_data/keyring
# Only the modules the manager insists on (its "always on" ones; without them health is
# HEALTH_ERR): all of them loaded take twice the memory and a share of a core for nothing here.
mgr_disabled_modules = $(optional_mgr_modules)

[osd]
osd_data = $DIR/osd/\$cluster-\$id
keyring = \$osd_data/keyring
osd_objectstore = bluestore
# The OSD's disk: a sparse file (bluestore links it as \$osd_data/block).
bluestore_block_path = $DIR/osd/\$cluster-\$id.block
bluestore_block_create = true
bluestore_block_size = $((OSD_GIB * 1024 * 1024 * 1024))
# A test cluster: small caches (the default aims at 4 GiB of memory).
osd_memory_target = 939524096
bluestore_cache_autotune = true

[$RGW_NAME]
# tcp_nodelay=1: without it beast answers small requests ~40 ms late (Nagle + delayed ACK).
rgw_frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw_data = $DIR/rgw
# Deleted objects' space comes back after RGW's garbage collector (2 h by default); a throwaway
# cluster gives it back within minutes.
rgw_gc_obj_min_wait = 60
rgw_gc_processor_period = 60
EOF
}

up() {
  for bin in ceph ceph-mon ceph-mgr ceph-osd radosgw radosgw-admin ceph-authtool monmaptool curl; do
    command -v "$bin" >/dev/null 2>&1 ||
      die "$bin is missing; install the Debian packages: apt-get install --no-install-recommends ceph-mon ceph-osd ceph-mgr radosgw ceph-common"
  done
  if answering; then
    log "already up at $DIR (RGW on 127.0.0.1:$RGW_PORT)"
    print_env
    return 0
  fi
  if [ -e "$DIR" ]; then
    log "a cluster at $DIR is not answering: removing it and starting afresh"
    down
  fi
  for port in "$RGW_PORT" "$MON_PORT"; do
    port_free "$port" || die "port $port is taken (set CAIRN_CEPH_PORT_BASE to a free range)"
  done
  local started=$SECONDS fsid
  mkdir -p "$DIR"/{run,log,mon,mgr,osd,rgw}
  fsid="$(cat /proc/sys/kernel/random/uuid)"
  write_conf "$fsid"

  log "monitor (127.0.0.1:$MON_PORT)"
  ceph-authtool --create-keyring "$DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$DIR/client.admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
  ceph-authtool "$DIR/mon.keyring" --import-keyring "$DIR/client.admin.keyring" >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
  ceph-mon --conf "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/mon.keyring" 2>>"$DAEMON_LOG"
  ceph-mon --conf "$CONF" -i a 2>>"$DAEMON_LOG"
  wait_for "monitor" ceph_ mon stat

  log "manager"
  mkdir -p "$DIR/mgr/ceph-x"
  ceph_ auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
    -o "$DIR/mgr/ceph-x/keyring"
  ceph-mgr --conf "$CONF" -i x 2>>"$DAEMON_LOG"

  log "OSD (${OSD_GIB} GiB sparse file)"
  local osd_uuid osd_secret osd_id
  osd_uuid="$(cat /proc/sys/kernel/random/uuid)"
  osd_secret="$(ceph-authtool --gen-print-key)"
  osd_id="$(printf '{"cephx_secret": "%s"}' "$osd_secret" | ceph_ osd new "$osd_uuid" -i -)"
  mkdir -p "$DIR/osd/ceph-$osd_id"
  ceph-authtool --create-keyring "$DIR/osd/ceph-$osd_id/keyring" --name "osd.$osd_id" --add-key "$osd_secret" >/dev/null
  ceph-osd --conf "$CONF" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" 2>>"$DAEMON_LOG" ||
    die "ceph-osd --mkfs failed"
  ceph-osd --conf "$CONF" -i "$osd_id" 2>>"$DAEMON_LOG"
  wait_for "OSD" osd_up

  log "RADOS Gateway (127.0.0.1:$RGW_PORT)"
  ceph_ auth get-or-create "$RGW_NAME" mon 'allow rw' osd 'allow rwx' -o "$DIR/$RGW_NAME.keyring"
  radosgw --conf "$CONF" -n "$RGW_NAME" 2>>"$DAEMON_LOG"
  wait_for "RGW" rgw_answers

  local key secret
  key="CAIRN$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F')"
  secret="$(head -c 30 /dev/urandom | base64 | tr -d '/+=\n')"
  radosgw-admin --conf "$CONF" user create --uid="$RGW_USER" --display-name="Cairn tests" \
    --access-key="$key" --secret-key="$secret" >/dev/null
  cat >"$ENV_FILE" <<EOF
export CAIRN_TEST_S3_ENDPOINT=http://127.0.0.1:$RGW_PORT
export CAIRN_TEST_S3_REGION=$REGION
export CAIRN_TEST_S3_ACCESS_KEY_ID=$key
export CAIRN_TEST_S3_SECRET_ACCESS_KEY=$secret
EOF
  wait_for "S3 with the test key" s3_answers
  log "up in $((SECONDS - started)) s: $(ceph_ health 2>&1)"
  print_env
}

status() {
  if answering; then
    log "up at $DIR: $(ceph_ health 2>&1)"
    return 0
  fi
  log "not up"
  return 1
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) print_env ;;
  status) status ;;
  *)
    echo "usage: $0 up|down|env|status" >&2
    exit 2
    ;;
esac
