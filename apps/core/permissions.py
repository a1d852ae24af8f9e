"""Django model permissions, with reads requiring view_<model>."""

from __future__ import annotations

from rest_framework.permissions import BasePermission, DjangoModelPermissions


def offers_method(request, view) -> bool:
    """Whether the view has a handler for the request's method.

    Permission checks run before DRF looks the handler up, so without this a caller lacking a
    permission got 403 for a method the route does not even offer; letting such a request
    through makes DRF answer 405 with `Allow`, whatever the caller's permissions.
    """
    method = request.method.lower()
    return method in view.http_method_names and hasattr(view, method)


class ModelPermissions(DjangoModelPermissions):
    """Read needs view_<model>, create add_<model>, update change_<model>.

    Read-only actions reached by POST (the legacy search) count as reads.
    """

    perms_map = {
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": [],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "POST": ["%(app_label)s.add_%(model_name)s"],
        "PUT": ["%(app_label)s.change_%(model_name)s"],
        "PATCH": ["%(app_label)s.change_%(model_name)s"],
        "DELETE": ["%(app_label)s.delete_%(model_name)s"],
    }
    read_actions = {"search"}

    def has_permission(self, request, view):
        if not request.user or not request.user.is_authenticated:
            return False
        if getattr(view, "_ignore_model_permissions", False) or not offers_method(request, view):
            return True
        queryset = self._queryset(view)
        method = "GET" if getattr(view, "action", None) in self.read_actions else request.method
        perms = self.get_required_permissions(method, queryset.model)
        return request.user.has_perms(perms)


def view_permission(model) -> str:
    """The permission reading `model` needs (`app_label.view_<model>`), as ModelPermissions asks
    it of a GET: for what shows a model's records outside its own endpoints (the back-office's
    change-page summaries)."""
    meta = model._meta
    return ModelPermissions.perms_map["GET"][0] % {
        "app_label": meta.app_label,
        "model_name": meta.model_name,
    }


class HasPermissions(BasePermission):
    """Requires the permissions listed in the view's `required_permissions`."""

    def has_permission(self, request, view):
        if not request.user or not request.user.is_authenticated:
            return False
        if not offers_method(request, view):
            return True
        return request.user.has_perms(getattr(view, "required_permissions", ()))
