"""moto_server with what the karpless integration tests need and moto lacks.

Usage: SSM_SEED=seed.json python3 launcher.py -H 127.0.0.1 -p PORT

seed.json = {"parameters": {name: value}, "images": [moto amis.json entries]}
  * parameters: public SSM parameters under /aws/service/... (EKS, Bottlerocket, Windows AMI
    aliases). moto refuses PutParameter under /aws/, so they are injected lazily into every
    account's parameter store, which also makes them survive /moto-api/reset.
  * images: AMIs added to moto's canned list (each account loads the list), so the SSM values
    point at images with real-looking names, architectures and creation dates.

POST /_fault {"action", "contains"?, "account"?, "status", "body", "content_type"?, "times"?}
  answers the next `times` (default 1, -1 = forever) requests for that action whose body contains
  `contains` (and, when given, whose x-moto-account-id equals `account`) with the canned response.
DELETE /_fault[?account=ID] clears the rules (of that account only, when given).

IAM enforcement (INITIAL_NO_AUTH_ACTION_COUNT=0 in the environment): every request must be signed by
an identity moto knows and is checked against its policies (actions only: moto evaluates no
conditions and authorizes most calls against the resource "*"). Two additions:
  * the key ROOT_ACCESS_KEY ("testing", what the tests seed with) is every account's root user:
    allowed everything, as root credentials are in AWS, so tests can seed any fresh account;
  * DynamoDB's TransactWriteItems/TransactGetItems are authorized per item (PutItem, UpdateItem,
    DeleteItem, ConditionCheckItem, GetItem), as AWS does: there is no IAM action of that name.
"""

import datetime
import io
import json
import os
import threading
from urllib.parse import parse_qs

import moto.ec2.models.amis as moto_amis
import moto.iam.access_control as access_control
import moto.server as moto_server
from botocore.credentials import Credentials
from moto.core.parse import default_timestamp_parser as parse_timestamp
from moto.ssm.models import Parameter, ParameterDict

SEED = {}
if os.environ.get("SSM_SEED"):
    with open(os.environ["SSM_SEED"], encoding="utf-8") as f:
        SEED = json.load(f)
PARAMETERS = SEED.get("parameters", {})
IMAGES = SEED.get("images", [])

_original_load_amis = moto_amis.AmiBackend._load_amis


def _load_seeded_amis(self):
    _original_load_amis(self)
    # Copies per backend: moto parses creation_date in place, which breaks the second account.
    for spec in IMAGES:
        ami = dict(spec)
        ami["owner_alias"] = "amazon"
        if ami.get("creation_date"):
            ami["creation_date"] = parse_timestamp(ami["creation_date"])
        self.amis[ami["ami_id"]] = moto_amis.Ami(self, **ami)


moto_amis.AmiBackend._load_amis = _load_seeded_amis

_original_check = ParameterDict._check_loading_status


def _seeding_check(self, key):
    _original_check(self, key)
    name = str(key or "")
    if (name.startswith("/aws") or name == "/") and not getattr(self, "_karpless_seeded", False):
        self._karpless_seeded = True
        now = datetime.datetime.now(datetime.timezone.utc)
        for param_name, value in PARAMETERS.items():
            self.setdefault(param_name, []).append(
                Parameter(
                    account_id=self.account_id,
                    name=param_name,
                    value=value,
                    parameter_type="String",
                    description=None,
                    allowed_pattern=None,
                    keyid=None,
                    last_modified_date=now,
                    version=1,
                    data_type="aws:ec2:image" if value.startswith("ami-") else "text",
                )
            )


ParameterDict._check_loading_status = _seeding_check

ROOT_ACCESS_KEY = "testing"
ROOT_SECRET_KEY = "testing"


class RootAccessKey:
    """The account's root user: every action allowed, no trust policy consulted."""

    def __init__(self, account_id, partition):
        self.arn = f"arn:{partition}:iam::{account_id}:root"

    def create_credentials(self):
        return Credentials(ROOT_ACCESS_KEY, ROOT_SECRET_KEY)

    def collect_policies(self):
        return []


_original_create_access_key = access_control.create_access_key


def _create_access_key(account_id, partition, access_key_id, headers):
    if access_key_id == ROOT_ACCESS_KEY:
        return RootAccessKey(account_id, partition)
    return _original_create_access_key(account_id, partition, access_key_id, headers)


access_control.create_access_key = _create_access_key

TRANSACT_ITEM_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}
_original_check_action_permitted = access_control.IAMRequestBase.check_action_permitted


def _check_action_permitted(self, resource):
    if isinstance(self._access_key, RootAccessKey):
        return
    if self._action in ("dynamodb:TransactWriteItems", "dynamodb:TransactGetItems"):
        items = json.loads(self._body or b"{}").get("TransactItems", [])
        actions = {TRANSACT_ITEM_ACTIONS[kind] for item in items for kind in item if kind in TRANSACT_ITEM_ACTIONS}
        transact = self._action
        try:
            for action in sorted(actions):
                self._action = action
                _original_check_action_permitted(self, resource)
        finally:
            self._action = transact
        return
    _original_check_action_permitted(self, resource)


access_control.IAMRequestBase.check_action_permitted = _check_action_permitted

FAULTS = []
LOCK = threading.Lock()
# DynamoDB checks a condition and writes atomically per item; moto's threaded server does not (two
# requests can both pass one condition), so DynamoDB requests run one at a time.
DYNAMODB_LOCK = threading.Lock()


def _read_body(environ):
    raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    environ["wsgi.input"] = io.BytesIO(raw)
    return raw


def _action(environ, text):
    from_query = (parse_qs(text).get("Action") or [None])[0]
    if from_query:
        return from_query
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    return target.split(".")[-1] or None


class FaultMiddleware:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == "/_fault":
            return self._control(environ, start_response)
        if FAULTS and environ["REQUEST_METHOD"] == "POST":
            text = _read_body(environ).decode("utf-8", "replace")
            action = _action(environ, text)
            account = environ.get("HTTP_X_MOTO_ACCOUNT_ID")
            with LOCK:
                for rule in FAULTS:
                    if rule.get("action") != action or rule.get("times", 1) == 0:
                        continue
                    if rule.get("account") and rule["account"] != account:
                        continue
                    if rule.get("contains", "") not in text:
                        continue
                    rule["times"] = rule.get("times", 1) - 1
                    status = int(rule.get("status", 400))
                    start_response(
                        f"{status} {'OK' if status == 200 else 'Error'}",
                        [("Content-Type", rule.get("content_type", "text/xml"))],
                    )
                    return [rule["body"].encode()]
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
            with DYNAMODB_LOCK:
                return list(self.app(environ, start_response))
        return self.app(environ, start_response)

    def _control(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        with LOCK:
            if method == "DELETE":
                account = (parse_qs(environ.get("QUERY_STRING", "")).get("account") or [None])[0]
                FAULTS[:] = [f for f in FAULTS if account and f.get("account") != account]
            elif method == "POST":
                FAULTS.append(json.loads(_read_body(environ) or b"{}"))
            remaining = len(FAULTS)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"ok": True, "rules": remaining}).encode()]


_run_simple = moto_server.run_simple
moto_server.run_simple = lambda host, port, app, **kw: _run_simple(host, port, FaultMiddleware(app), **kw)

if __name__ == "__main__":
    moto_server.main()
