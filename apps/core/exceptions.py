"""HTTP-flavoured exceptions that services raise for the statuses DRF lacks."""

from rest_framework import status
from rest_framework.exceptions import APIException


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with an existing resource."
    default_code = "conflict"


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than allowed."
    default_code = "payload_too_large"


class UnprocessableEntity(APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "The request cannot be processed in the resource's current state."
    default_code = "unprocessable"


class ServiceUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "A backing service is unavailable; try again shortly."
    default_code = "service_unavailable"


# Two writes to the same records at once, one rolled back whole by the database (PostgreSQL's
# deadlock_detected or serialization_failure): nothing was written; sent again, it goes.
class WriteConflict(ServiceUnavailable):
    default_detail = (
        "A concurrent write to the same records conflicted with this one; nothing was written. "
        "Send it again."
    )
    default_code = "write_conflict"
    wait = 1  # Retry-After
