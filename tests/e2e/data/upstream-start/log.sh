
#!/bin/sh
set -eu

POD_NAME=${POD_NAME:-$HOSTNAME}
ADDR="${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc"
ORDINAL=${POD_NAME##*-}
if [ -z "${HOSTNAME_UUID+guard}" ]; then
  UUID=$(printf '00000000-0000-0000-0000-0%011x' ${ORDINAL})
else
  UUID=$(echo ${ADDR} | sha256sum | od -x | head -1 | awk '{OFS="-"; print $2$3,$4,$5,$6,$7$8$9}')
fi
conf=$(mktemp)

bc=$(mktemp)
cat <<EOF > ${bc}
uuid = "${UUID}"
service-host = "${ADDR}"
raft-port = 32000
logservice-port = 32001
gossip-port = 32002
EOF

# build instance config
if [ -n "${CONFIG_SUFFIX}" ]; then
  sed "/\[logservice\]/r ${bc}" /etc/logservice/logservice.toml-${CONFIG_SUFFIX} > ${conf}
else
  sed "/\[logservice\]/r ${bc}" /etc/logservice/logservice.toml > ${conf}
fi

# insert gossip config
gossipTmp=$(mktemp)
sed "/\[logservice\]/d" /etc/gossip/gossip.toml > ${gossipTmp}
sed -i "/\[logservice\]/r ${gossipTmp}" ${conf}

# append bootstrap config
sed "/\[logservice\]/d" /etc/bootstrap/bootstrap.toml >> ${conf}

# there is a chance that the dns is not yet added to kubedns and the
# server will crash, wait before myself to be resolvable
elapseTime=0
period=1
threshold=30
while true; do
    sleep ${period}
    elapseTime=$(( elapseTime+period ))
    if [ ${elapseTime} -ge ${threshold} ]; then
        echo "waiting for dns resolvable timeout" >&2 && exit 1
    fi
    if nslookup ${ADDR} >/dev/null; then
        break
    else
        echo "waiting pod dns name ${ADDR} resolvable" >&2
    fi
done

echo "/mo-service -cfg ${conf} $@"
exec /mo-service -cfg ${conf} $@
