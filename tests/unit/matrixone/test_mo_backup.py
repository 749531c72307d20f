"""mo_br command lines and metadata (matrixone/backup.py).

The flags and their order are upstream's (pkg/controllers/br/command.go), spelled out
literally; credentials only ever appear as references to environment variables that
come from Secrets.
"""

from __future__ import annotations

import shlex

import pytest

from mo_operator.matrixone import backup as br

MINIO = {
    "s3": {
        "type": "minio",
        "path": "backups/daily/",
        "endpoint": "http://minio:9000",
        "secretRef": {"name": "s3-keys"},
    }
}


def test_a_target_splits_bucket_and_path_and_defaults_the_endpoint_to_aws() -> None:
    t = br.S3Target.of(MINIO)
    assert (t.endpoint, t.bucket, t.path, t.minio, t.secret) == (
        "http://minio:9000",
        "backups",
        "daily",
        True,
        "s3-keys",
    )
    aws = br.S3Target.of({"s3": {"path": "/only-bucket"}})
    assert (aws.endpoint, aws.bucket, aws.path, aws.minio, aws.secret) == (
        "s3.us-west-2.amazonaws.com",
        "only-bucket",
        "",
        False,
        None,
    )
    assert aws.url == "s3://only-bucket" and t.url == "s3://backups/daily"
    with pytest.raises(ValueError, match="only s3"):
        br.S3Target.of({"fileSystem": {"path": "/mnt"}})


def test_the_backup_command_is_upstreams_and_names_no_secret() -> None:
    script = br.backup_script("mo-proxy.ns", 6001, br.S3Target.of(MINIO))
    assert script == (
        '/mo_br backup --host=mo-proxy.ns --port=6001 --user="$MO_USER" --password="$MO_PASSWORD" '
        "--backup_dir=s3 --endpoint=http://minio:9000 --bucket=backups --filepath=daily --is_minio "
        '--access_key_id="$AWS_ACCESS_KEY_ID" --secret_access_key="$AWS_SECRET_ACCESS_KEY" '
        "&& cat /mo_br.meta > /dev/termination-log"
    )
    plain = br.backup_script("h", 6001, br.S3Target.of({"s3": {"path": "b"}}))
    assert "--filepath" not in plain and "--is_minio" not in plain and "access_key" not in plain


def test_spec_values_cannot_break_out_of_their_argument() -> None:
    hostile = br.S3Target.of({"s3": {"path": "b/x; rm -rf ~", "endpoint": "http://e $(id)"}})
    script = br.backup_script("h", 6001, hostile)
    words = shlex.split(script.split("&&")[0])
    assert "--filepath=x; rm -rf ~" in words and "--endpoint=http://e $(id)" in words
    assert script.count("&&") == 1


def test_the_restore_command_reads_each_side_s_keys_from_its_own_secret() -> None:
    source = br.S3Target.of(MINIO)
    target = br.S3Target.of({"s3": {"path": "data/new", "secretRef": {"name": "target-keys"}}})
    script = br.restore_script("4d21b228-10dd", source, target)
    assert script == (
        'echo "$RAW_META" > /mo_br.meta '
        "&& sha256sum /mo_br.meta | awk '{printf \"%s\",$1}' > /mo_br.meta.sha256 "
        "&& /mo_br restore 4d21b228-10dd --restore_dir s3 "
        '--backup_access_key_id="$AWS_ACCESS_KEY_ID" --backup_secret_access_key="$AWS_SECRET_ACCESS_KEY" '
        "--restore_endpoint=s3.us-west-2.amazonaws.com --restore_bucket=data --restore_filepath=new "
        '--restore_access_key_id="$RESTORE_ACCESS_KEY_ID" '
        '--restore_secret_access_key="$RESTORE_SECRET_ACCESS_KEY"'
    )
    env = {e["name"]: e for e in br.restore_env("raw,meta", source, target)}
    assert env["RAW_META"] == {"name": "RAW_META", "value": "raw,meta"}
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"] == {
        "name": "s3-keys",
        "key": "AWS_ACCESS_KEY_ID",
    }
    assert env["RESTORE_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"] == {
        "name": "target-keys",
        "key": "AWS_ACCESS_KEY_ID",
    }
    assert env["RESTORE_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "target-keys",
        "key": "AWS_SECRET_ACCESS_KEY",
    }
    minio_target = br.restore_script("x", br.S3Target.of({"s3": {"path": "b"}}), source)
    assert minio_target.endswith("--restore_is_minio") and "--backup_access_key_id" not in minio_target


def test_every_credential_of_a_backup_comes_from_a_secret() -> None:
    env = br.backup_env("mo-credential", br.S3Target.of(MINIO))
    assert [e["name"] for e in env] == [
        "MO_USER",
        "MO_PASSWORD",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
    ]
    assert all("value" not in e and "secretKeyRef" in e["valueFrom"] for e in env)
    assert env[0]["valueFrom"]["secretKeyRef"] == {"name": "mo-credential", "key": "username"}
    assert env[1]["valueFrom"]["secretKeyRef"] == {"name": "mo-credential", "key": "password"}
    assert [e["name"] for e in br.backup_env("c", br.S3Target.of({"s3": {"path": "b"}}))] == [
        "MO_USER",
        "MO_PASSWORD",
    ]


def test_metadata_is_the_last_line_id_first_with_optional_list_columns() -> None:
    text = (
        "old-backup,1,b/p,2024-05-12T00:00:00Z,1s,2024-05-12T00:00:01Z\n"
        "4d21b228-10dd-11ef-9497-26dd28356ef2, 586 kB ,backups/daily,2024-05-13 12:00:12 +0800,"
        "1.7s,2024-05-13 12:00:13 +0800\n\n"
    )
    meta = br.parse_metadata(text)
    assert meta.id == "4d21b228-10dd-11ef-9497-26dd28356ef2"
    assert meta.size == 586_000 and meta.path == "backups/daily"
    assert meta.at_time == "2024-05-13T04:00:12Z" and meta.complete_time == "2024-05-13T04:00:13Z"
    assert meta.raw == text.strip()


@pytest.mark.parametrize(
    ("size", "value"),
    [("1048576", 1048576), ("8.3 MB", 8_300_000), ("2GiB", 2 * 1024**3), ("lots", None), ("", None)],
)
def test_metadata_sizes(size: str, value: int | None) -> None:
    assert br.parse_metadata(f"id-1,{size}").size == value


def test_metadata_with_only_an_id_is_enough_and_bad_fields_are_ignored() -> None:
    meta = br.parse_metadata("abcde-123")
    assert (meta.id, meta.size, meta.path, meta.at_time, meta.complete_time) == (
        "abcde-123",
        None,
        None,
        None,
        None,
    )
    odd = br.parse_metadata("abcde-123,?,,yesterday,,2024-05-13T12:00:13")  # no zone: not a time
    assert odd.at_time is None and odd.complete_time is None and odd.path is None


@pytest.mark.parametrize("text", ["", "  \n ", ",1,b/p", "not an id,1", "-dash-first,1"])
def test_unreadable_metadata_is_an_error(text: str) -> None:
    with pytest.raises(br.MetadataError):
        br.parse_metadata(text)


def test_metadata_round_trips_through_its_formatter() -> None:
    line = br.format_metadata("id-42", 1024, "b/p", "2024-01-01T00:00:00Z", "1s", "2024-01-01T00:00:01Z")
    meta = br.parse_metadata(line)
    assert (meta.id, meta.size, meta.path, meta.at_time, meta.complete_time) == (
        "id-42",
        1024,
        "b/p",
        "2024-01-01T00:00:00Z",
        "2024-01-01T00:00:01Z",
    )


def test_backup_names_are_upstreams_and_always_valid() -> None:
    assert br.backup_name("nightly", "4d21b228-10dd") == "nightly-4d21b"
    assert br.backup_name("nightly", "ABCDEF") == "nightly-abcde"
    odd = br.backup_name("nightly", "a.b_c-d")
    assert odd.startswith("nightly-") and len(odd) == len("nightly-") + 5 and odd[8:].isalnum()
    assert odd == br.backup_name("nightly", "a.b_c-d")
