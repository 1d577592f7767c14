#!/bin/bash
# LocalStack READY hook: creates Plume's table and bucket. It runs inside the LocalStack
# container (awslocal is the AWS CLI pointed at LocalStack) and is safe to run again.
#
# The table schema is /etc/plume/table.json (localstack/table.json, mounted by
# docker-compose.yml), which a test in infra/ keeps equal to infra.TableDefinition.
set -euo pipefail

table="${PLUME_TABLE_NAME:-plume-local}"
bucket="${PLUME_BUCKET_NAME:-plume-local}"
schema="${PLUME_TABLE_SCHEMA:-/etc/plume/table.json}"

if awslocal dynamodb describe-table --table-name "$table" >/dev/null 2>&1; then
  echo "plume: table $table exists"
else
  awslocal dynamodb create-table --cli-input-json "file://$schema" --table-name "$table" >/dev/null
  awslocal dynamodb wait table-exists --table-name "$table"
  echo "plume: created table $table"
fi

# create-table cannot enable TTL; items expire on the "ttl" attribute (infra.AttrTTL).
status="$(awslocal dynamodb describe-time-to-live --table-name "$table" \
  --query TimeToLiveDescription.TimeToLiveStatus --output text)"
if [ "$status" != "ENABLED" ]; then
  awslocal dynamodb update-time-to-live --table-name "$table" \
    --time-to-live-specification Enabled=true,AttributeName=ttl >/dev/null
  echo "plume: enabled TTL on $table"
fi

if awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
  echo "plume: bucket $bucket exists"
else
  awslocal s3api create-bucket --bucket "$bucket" >/dev/null
  echo "plume: created bucket $bucket"
fi
