// "Select all" on an export page (templates/admin/import_export/export.html): checks or
// unchecks every field's box. Bound here, from the site's own origin, because the
// Content-Security-Policy (script-src 'self') refuses the inline onchange handler the
// library's template wrote.
if (!window.backofficeExportSelectAll) {
  window.backofficeExportSelectAll = true;
  document.addEventListener("change", function (event) {
    var toggle = event.target;
    if (!toggle.classList || !toggle.classList.contains("select-toggle")) {
      return;
    }
    var boxes = document.querySelectorAll(
      '.selectable-field-export-row input[type="checkbox"]:not(.select-toggle)'
    );
    boxes.forEach(function (box) {
      box.checked = toggle.checked;
    });
  });
}
