"""A stand-in for the published `logsnag` package, used by TestPythonSnippet only
where PyPI cannot be reached (pip install logsnag fails). It is not LogSnag's code:
it sends what the package sends, the way it sends it — one requests.Session with a
Bearer token, JSON bodies to https://api.logsnag.com — so that the README's snippet,
which rewrites those URLs in requests.Session.request, is tested either way."""

import requests

ENDPOINT = "https://api.logsnag.com/v1"


class FailedToPublish(Exception):
    pass


class _Insight:
    def __init__(self, client):
        self._client = client

    def track(self, title, value, icon=None):
        self._client._send("POST", "/insight", title=title, value=value, icon=icon)

    def increment(self, title, value, icon=None):
        self._client._send("PATCH", "/insight", title=title, value={"$inc": value}, icon=icon)


class LogSnag:
    def __init__(self, token, project):
        self._project = project
        self._session = requests.Session()
        self._session.headers.update({"Content-Type": "application/json", "Authorization": "Bearer " + token})
        self.insight = _Insight(self)

    def _send(self, method, path, **fields):
        body = {"project": self._project}
        body.update({k: v for k, v in fields.items() if v is not None})
        res = self._session.request(method, ENDPOINT + path, json=body)
        if not 200 <= res.status_code < 300:
            raise FailedToPublish(res.json().get("message") or res.json().get("detail"))

    def track(self, channel, event, user_id=None, description=None, icon=None, tags=None, notify=False):
        self._send("POST", "/log", channel=channel, event=event, user_id=user_id, description=description,
                   icon=icon, tags=tags, notify=notify)

    def identify(self, user_id, properties):
        self._send("POST", "/identify", user_id=user_id, properties=properties)
