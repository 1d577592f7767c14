// Settings page: a copy button for a new key's secret. Without the script the secret is in a
// read-only field to select and copy by hand.
(function () {
  "use strict";
  document.querySelectorAll("button.settings-copy[data-copy]").forEach(function (btn) {
    var field = document.getElementById(btn.dataset.copy);
    var status = btn.parentElement.querySelector(".settings-copied");
    if (!field) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      field.select();
      var done = function () { if (status) status.textContent = "Copied."; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          if (status) status.textContent = "Select the key and copy it by hand.";
        });
      } else {
        if (status) status.textContent = "Select the key and copy it by hand.";
      }
    });
  });
})();
