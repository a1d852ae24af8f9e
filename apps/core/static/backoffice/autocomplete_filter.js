// A relation filter shown as a search box (the admin's autocomplete): choosing a record opens
// the list filtered by it, clearing the box opens the list without that filter.
if (!window.backofficeAutocompleteFilter) {
  window.backofficeAutocompleteFilter = true;
  window.addEventListener("load", function () {
    django.jQuery(document).on("change", "select.bo-autocomplete-filter", function () {
      const all = this.closest("[data-all]").dataset.all.replace(/^\?/, "");
      const params = new URLSearchParams(all);
      if (this.value) {
        params.set(this.name, this.value);
      }
      window.location.search = params.toString();
    });
  });
}
