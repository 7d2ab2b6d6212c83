"""The upload size limit (``UPLOAD_MAX_MB``): a request body over it is refused with a clear message, never a 500,
and its bytes are neither kept in memory nor written to disk.

* under /api/: a JSON 413 (``{"detail": ...}``), before the body is read;
* a page's multipart form: the body is read to its end with every file discarded (:class:`DiscardingUploadHandler`)
  so that the form comes back with the message under its file field (:class:`LimitedFileField`), its other fields
  kept;
* any other page request: a 413 page.

Files under the limit go to a temporary file once they are over ``FILE_UPLOAD_MAX_MEMORY_SIZE`` (Django's upload
handlers), never whole into memory."""
from __future__ import annotations

import io
from collections.abc import Callable

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from config.errors import API_PREFIX

MB = 1024 * 1024


def upload_limit_bytes() -> int:
    return int(float(settings.UPLOAD_MAX_MB) * MB)


def too_large_message(size: int) -> str:
    """What an upload of ``size`` bytes (the whole request) is told."""
    shown = f"{size / MB:.1f} MB" if size >= MB else f"{size / 1024:.1f} KB"
    return (f"The upload is {shown}; uploads are limited to {float(settings.UPLOAD_MAX_MB):g} MB (UPLOAD_MAX_MB). "
            "Nothing was stored.")


def _content_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


class DiscardedUpload(UploadedFile):
    """A file of a request over the limit: its name and the request's size, none of its bytes."""

    discarded = True

    def __init__(self, name: str, request_size: int, content_type: str | None, charset: str | None) -> None:
        super().__init__(file=io.BytesIO(), name=name, content_type=content_type, size=max(request_size, 1),
                         charset=charset)
        self.request_size = request_size


class DiscardingUploadHandler(FileUploadHandler):
    """Reads each file of the request and keeps none of it (the request is over the limit)."""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        return None

    def file_complete(self, file_size: int) -> DiscardedUpload:
        request = self.request
        size = _content_length(request) if request is not None else file_size
        return DiscardedUpload(self.file_name or "upload", size, self.content_type, self.charset)


def check_upload_size(upload: UploadedFile) -> None:
    """A file field's validator: the file of a request over the limit (or, without a Content-Length, a file over
    it) is refused with :func:`too_large_message`."""
    if isinstance(upload, DiscardedUpload):
        raise ValidationError(too_large_message(upload.request_size), code="too_large")
    if (upload.size or 0) > upload_limit_bytes():
        raise ValidationError(too_large_message(upload.size or 0), code="too_large")


class LimitedFileField(forms.FileField):
    """A form's file field under ``UPLOAD_MAX_MB``."""

    default_validators = [check_upload_size]


class UploadLimitMiddleware:
    """Refuses a request body over ``UPLOAD_MAX_MB`` as the module docstring says."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        size = _content_length(request)
        if size > upload_limit_bytes():
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": too_large_message(size)}, status=413)
            if request.content_type != "multipart/form-data":
                return render(request, "413.html", {"message": too_large_message(size)}, status=413)
            request.upload_handlers = [DiscardingUploadHandler(request)]
        return self.get_response(request)
