
#!/bin/sh
set -eu
POD_NAME=${POD_NAME:-$HOSTNAME}
ADDR="${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc"
UUID=$(echo ${ADDR} | sha256sum | od -x | head -1 | awk '{OFS="-"; print $2$3,$4,$5,$6,$7$8$9}')
conf=$(mktemp)
bc=$(mktemp)
cat <<EOF > ${bc}
uuid = "${UUID}"
listen-address = "0.0.0.0:6002"
service-address = "${POD_IP}:6002"
sql-address = "${POD_IP}:6001"
service-host = "${POD_IP}"
EOF
# build instance config
if [ -n "${CONFIG_SUFFIX}" ]; then
  sed "/\[cn\]/r ${bc}" /etc/matrixone/config/config.toml-${CONFIG_SUFFIX} > ${conf}
else
  sed "/\[cn\]/r ${bc}" /etc/matrixone/config/config.toml > ${conf}
fi

# append lock-service configs
lsc=$(mktemp)
cat <<EOF > ${lsc}
service-address = "${POD_IP}:6003"
EOF
sed -i "/\[cn.lockservice\]/r ${lsc}" ${conf}

echo "/mo-service -cfg ${conf} $@"
exec /mo-service -cfg ${conf} $@
