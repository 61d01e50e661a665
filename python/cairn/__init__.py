"""Cairn: an artifact store for AI agents. Python SDK (standard library only).

    from cairn import Cairn
    client = Cairn()                      # CAIRN_API_KEY / CAIRN_API_URL
    art = client.push(path="report.md", session_id="run-42")
    print(client.get(art.artifact_id))
"""

__version__ = "0.1.0"

from .client import DEFAULT_BASE_URL, Cairn  # noqa: E402
from .errors import *  # noqa: E402,F401,F403
from .events import WebhookVerificationError, verify_webhook  # noqa: E402
from .errors import __all__ as _errors_all  # noqa: E402
from .models import *  # noqa: E402,F401,F403
from .models import __all__ as _models_all  # noqa: E402

__all__ = ["Cairn", "DEFAULT_BASE_URL", "WebhookVerificationError", "__version__", "verify_webhook", *_errors_all, *_models_all]
