"""`socialpub login` / `socialpub logout`: an owner session for key management on a server."""

from __future__ import annotations

import click

from socialpub_tui.cli._common import Output, api_command, profile_name, short_time, time_options
from socialpub_tui.client.config import forget_session, resolve_profile, save_session


@click.command("login")
@click.option("--email", prompt=True, help="Owner login email.")
@click.option(
    "--password", prompt=True, hide_input=True, help="Owner password (prompted, hidden, when omitted)."
)
@time_options
@api_command
def login_cmd(email: str, password: str, out: Output) -> None:
    """Log in as the workspace owner; the session is saved for `keys` commands (file mode 0600).

    An embedded backend needs no login: whoever can read the data dir is the operator.

    \b
    Example:
      socialpub --profile work login --email me@acme.test
    """
    # deferred: socialpub_tui.client.sync costs ~89 ms of start-up, paid only by the commands that use it
    from socialpub_tui.client.sync import Client

    profile = resolve_profile(profile_name())
    if profile.kind == "embedded":
        out.emit(
            {"ok": True, "embedded": True, "dataDir": str(profile.data_dir or "") or None},
            "Embedded backend: no login needed (the data dir is the credential).",
        )
        return
    with Client(profile.url or "") as client:
        session = client.login(email, password)
    path = save_session(
        profile,
        {
            "token": session.session_token,
            "expiresAt": session.expires_at,
            "email": email.strip().lower(),
            "workspaceId": session.workspace_id,
        },
    )
    out.emit(
        {
            "ok": True,
            "url": profile.url,
            "workspaceId": session.workspace_id,
            "expiresAt": session.expires_at,
            "sessionFile": str(path),
        },
        f"Logged in to {profile.url} as {email} (workspace {session.workspace_id}); "
        f"session valid until {short_time(session.expires_at)}.",
    )


@click.command("logout")
@api_command
def logout_cmd(out: Output) -> None:
    """Forget the saved owner session for the current profile's server.

    \b
    Example:
      socialpub --profile work logout
    """

    profile = resolve_profile(profile_name())
    forgot = forget_session(profile)
    out.emit({"ok": True, "forgotten": forgot}, "Logged out." if forgot else "No saved session.")
