
#!/bin/sh
set -eu
POD_NAME=${POD_NAME:-$HOSTNAME}
ADDR="${POD_NAME}.${NAMESPACE}.svc"
UUID=$(echo ${ADDR} | sha256sum | od -x | head -1 | awk '{OFS="-"; print $2$3,$4,$5,$6,$7$8$9}')
conf=$(mktemp)
bc=$(mktemp)
cat <<EOF > ${bc}
uuid = "${UUID}"
EOF
# build instance config
if [ -n "${CONFIG_SUFFIX}" ]; then
  sed "/\[proxy\]/r ${bc}" "/etc/matrixone/config/config.toml-${CONFIG_SUFFIX}" > ${conf}
else
  sed "/\[proxy\]/r ${bc}" "/etc/matrixone/config/config.toml" > ${conf}
fi

echo "/mo-service -cfg ${conf} $@"
exec /mo-service -cfg ${conf} $@
