"""Instagram's error switches (backend/networks/sandbox/errors.py): NETWORKS.md section 2's code / subcode table,
in the Graph API's error body (Facebook's package)."""

from __future__ import annotations

from backend.networks.facebook.emulator_errors import GRAPH, graph_fault

# section 2, the code / subcode table (error body as Facebook's)
FAULT_LIST = [
    graph_fault("-2/2207003", 400, "retry", "It took too long to download the media.", transient=True),
    graph_fault(
        "-2/2207020",
        400,
        "retry",
        "The media you are trying to access has expired. Please try to upload again.",
    ),
    graph_fault(
        "-1/2207001",
        400,  # every row of Instagram's error table is a 400
        "retry",
        "An unexpected error has occurred. Please retry your request later.",
        transient=True,
    ),
    graph_fault("-1/2207032", 400, "retry", "Failed to create the media container. Please try again."),
    graph_fault("-1/2207053", 400, "retry", "An unknown error occurred during the upload. Please try again."),
    graph_fault(
        "4/2207051",
        400,
        "permanent",
        "We restrict certain activity to protect our community (action blocked as spam).",
    ),
    graph_fault(
        "9/2207042",
        400,
        "wait",
        "You have reached the maximum number of posts allowed in 24 hours (content_publishing_limit).",
    ),
    graph_fault("24/2207006", 400, "retry", "The media with the given id was not found. Please try again."),
    graph_fault(
        "24/2207008",
        400,
        "retry",
        "The media builder has expired. Please try again in 30 seconds to 2 minutes.",
    ),
    graph_fault(
        "25/2207050",
        400,
        "permanent",
        "The Instagram account is restricted: the user must fix it in the app.",
    ),
    graph_fault("100/2207023", 400, "permanent", "The media type is unknown."),
    graph_fault("100/2207028", 400, "permanent", "A carousel needs 2 to 10 children."),
    graph_fault("9004/2207052", 400, "permanent", "The media could not be fetched from this URI."),
    graph_fault(
        "9007/2207027", 400, "retry", "The media is not ready to be published. Please wait a moment."
    ),
    graph_fault("36000/2207004", 400, "permanent", "The image is too large (8 MB at most)."),
    graph_fault("36003/2207009", 400, "permanent", "The aspect ratio is not supported."),
    graph_fault("352/2207026", 400, "permanent", "The video format is not supported."),
    graph_fault("190/463", 400, "reauth", "Error validating access token: Session has expired.", extra=True),
]

FAULTS = {f.code: f for f in FAULT_LIST}

# endpoint names a switch's `path` may give: (methods, regular expression on the request path); "publish" (the
# default) is the network's first write of a publication
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), GRAPH + r"/\d+/media/?$"),
    "media_publish": (("POST",), GRAPH + r"/\d+/media_publish/?$"),
    "status": (("GET",), GRAPH + r"/\d+/?$"),
    "list": (("GET",), GRAPH + r"/\d+/media/?$"),
}
