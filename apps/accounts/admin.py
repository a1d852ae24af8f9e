from django.contrib import admin, messages

from apps.accounts.models import ApiKey
from apps.accounts.services import (
    api_key_create,
    api_key_delete,
    api_key_revoke,
    api_key_update,
)
from apps.core.admin import run_on_each


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "is_active", "created_at", "created_by", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["name", "prefix"]
    readonly_fields = ["prefix", "created_at", "created_by", "revoked_at"]
    fields = ["name", "prefix", "created_at", "created_by", "revoked_at"]
    actions = ["revoke"]
    list_select_related = ["created_by"]

    @admin.display(boolean=True)
    def is_active(self, obj: ApiKey) -> bool:
        return obj.is_active

    def save_model(self, request, obj, form, change):
        if change:
            api_key_update(api_key=obj, name=form.cleaned_data["name"])
            return
        key, raw = api_key_create(name=obj.name, user=request.user)
        obj.pk = key.pk
        obj.__dict__.update(key.__dict__)
        messages.warning(request, f"The new key is {raw} — copy it now, it is not shown again.")

    def delete_model(self, request, obj):
        api_key_delete(api_key=obj)

    def delete_queryset(self, request, queryset):
        for key in queryset:
            api_key_delete(api_key=key)

    @admin.action(description="Revoke selected API keys", permissions=["change"])
    def revoke(self, request, queryset):
        run_on_each(self, request, queryset, lambda key: api_key_revoke(api_key=key), "Revoked")
