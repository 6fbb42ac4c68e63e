"""Azure OpenAI, Amazon Bedrock and Google Vertex through the SDKs' own clients, with the fake
server standing in for each endpoint (its paths, its authentication, Bedrock's binary event stream),
and a provider's `http_headers` / `query_params`. No network: every credential is local."""

from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from agent_cli import items
from agent_cli.config import load_config
from agent_cli.items import Message
from agent_cli.models.base import Prompt
from agent_cli.models.errors import ModelError
from agent_cli.models.registry import (
    BUILTIN_PROVIDERS,
    ProviderConfig,
    create_client,
    resolve_api_key,
    resolve_base_url,
)
from tests.fake_server import FakeModelServer, Reply
from tests.integration.model_client_helpers import FAST_RETRY, collect, output_items

PROMPT = Prompt("sys", [items.user("hello")])
CLOUD_VARIABLES = (
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_AD_TOKEN",
    "OPENAI_API_VERSION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "GOOGLE_CLOUD_PROJECT",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_BASE_URL",
)


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch, tmp_path):
    """Nothing of this machine's cloud set-up is read, and no metadata server is asked."""
    for name in CLOUD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # a closed port: "not on Google Cloud" at once
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")


def client_for(provider: ProviderConfig, model: str):
    return create_client(
        provider, model, api_key=resolve_api_key(provider), base_url=resolve_base_url(provider), retry=FAST_RETRY
    )


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_azure_sends_to_the_deployment_with_the_api_version_and_key(server, monkeypatch, wire):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base_url)
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-03-01-preview")
    server.script(Reply(text="from azure"))
    events = await collect(client_for(replace(BUILTIN_PROVIDERS["azure"], wire_api=wire), "my-gpt-deployment"), PROMPT)
    assert [i.text for i in output_items(events)] == ["from azure"]
    request = server.requests[0]
    url = urlsplit(request.path)
    expected = "/openai/responses" if wire == "responses" else "/openai/deployments/my-gpt-deployment/chat/completions"
    assert url.path == expected and request.cloud == "azure"
    assert parse_qs(url.query)["api-version"] == ["2025-03-01-preview"]
    assert request.headers["api-key"] == "azure-key" and "authorization" not in request.headers


async def test_azure_takes_an_entra_id_token_instead_of_a_key(server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_AD_TOKEN", "entra-token")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base_url)
    server.script(Reply(text="ok"))
    await collect(client_for(BUILTIN_PROVIDERS["azure"], "dep"), PROMPT)
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer entra-token" and "api-key" not in headers
    assert parse_qs(urlsplit(server.requests[0].path).query)["api-version"]  # the default version


def test_azure_without_key_or_token_says_what_is_missing(monkeypatch):
    with pytest.raises(ModelError, match="AZURE_OPENAI_API_KEY .*AZURE_OPENAI_AD_TOKEN"):
        client_for(BUILTIN_PROVIDERS["azure"], "dep")


async def test_bedrock_signs_with_sigv4_and_reads_the_aws_event_stream(server, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
    server.script(Reply(text="from bedrock", chunk_size=4))
    model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    events = await collect(client_for(BUILTIN_PROVIDERS["bedrock"], model), PROMPT)
    assert output_items(events) == [Message("assistant", "from bedrock")]
    request = server.requests[0]
    assert unquote(urlsplit(request.path).path) == f"/model/{model}/invoke-with-response-stream"
    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-west-2/bedrock/aws4_request" in authorization and "Signature=" in authorization
    assert request.headers["x-amz-date"] and request.body["anthropic_version"]  # in the body, not a header
    assert "model" not in request.body and "stream" not in request.body  # both are in the path


async def test_bedrock_without_aws_credentials_says_what_is_missing(server, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
    with pytest.raises(ModelError, match="provider bedrock needs AWS credentials"):
        await collect(client_for(BUILTIN_PROVIDERS["bedrock"], "anthropic.claude"), PROMPT)
    assert server.requests == []


def service_account_key(token_uri: str) -> dict:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return {
        "type": "service_account",
        "project_id": "adc-project",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "agent@adc-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }


def token_endpoint(request):
    return 200, {"access_token": "ya29.fake-token", "expires_in": 3600, "token_type": "Bearer"}


async def test_vertex_uses_application_default_credentials(monkeypatch, tmp_path):
    with FakeModelServer(routes={("POST", "/token"): token_endpoint}) as server:
        adc = tmp_path / "adc.json"  # a service account key, its token URL local (a user's login ignores it)
        adc.write_text(json.dumps(service_account_key(f"{server.base_url}/token")))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", f"{server.base_url}/v1")
        server.script(Reply(text="from vertex"))
        events = await collect(client_for(BUILTIN_PROVIDERS["vertex"], "claude-sonnet-4-5@20250929"), PROMPT)
        request = server.requests[0]
    assert [i.text for i in output_items(events)] == ["from vertex"]
    assert server.route_hits == [("POST", "/token")]
    assert request.path == (
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert request.headers["authorization"] == "Bearer ya29.fake-token"
    assert request.body["anthropic_version"] and "model" not in request.body  # the model is in the path


async def test_vertex_without_credentials_says_what_is_missing(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", f"{server.base_url}/v1")
    with pytest.raises(ModelError, match="provider vertex needs Google application-default credentials"):
        await collect(client_for(BUILTIN_PROVIDERS["vertex"], "claude"), PROMPT)
    assert server.requests == []


async def test_http_headers_and_query_params_of_a_provider_table(server, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    config = load_config(
        tmp_path,
        [
            f'model_providers.proxy.base_url="{server.openai_base_url}"',
            'model_providers.proxy.wire_api="chat"',
            'model_providers.proxy.http_headers={ "X-Team" = "core", "X-Trace" = "on" }',
            'model_providers.proxy.query_params={ "tenant" = "t1" }',
            'model_provider="proxy"',
        ],
    )
    server.script(Reply(text="through the proxy"))
    await collect(client_for(config.provider, "m"), PROMPT)
    request = server.requests[0]
    assert request.headers["x-team"] == "core" and request.headers["x-trace"] == "on"
    assert parse_qs(urlsplit(request.path).query) == {"tenant": ["t1"]}


def test_provider_headers_must_be_strings(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    from agent_cli.config import ConfigError

    with pytest.raises(ConfigError, match="http_headers must be a table of strings"):
        load_config(tmp_path, ['model_providers.p.http_headers={ "X-N" = 1 }', 'model_provider="p"'])
