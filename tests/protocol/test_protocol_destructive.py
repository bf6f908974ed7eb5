"""The destructive-step classifier: what a step does, read the way its shell reads it,
whatever scope the controller typed."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.protocol.destructive import TOO_COMPLEX, classify, task_destructive
from relay.protocol.messages import TaskMsg

PS = "powershell"

# (step, the TASK's shell, a word the reason must hold)
DESTRUCTIVE: list[tuple[str, str | None, str]] = [
    ("rm -f /etc/passwd", "sh", "removal outside"),
    ("rm ~/.ssh/id_ed25519", "sh", "removal outside"),
    ("rm ../other/file", "sh", "removal outside"),
    ("rm -rf /", "sh", "rm -r"),
    ("rm -fr build", "sh", "rm -r"),
    ("rm -r -f ~/projects", "sh", "rm -r"),
    ("rm --recursive --force /srv", "sh", "rm -r"),
    ("rm -R data", "sh", "rm -r"),
    ("/bin/rm -rf /var/lib/app", "sh", "rm -r"),
    ('"/usr/bin/rm" -rf x', "sh", "rm -r"),
    ("'rm' -rf x", "sh", "rm -r"),
    ("sudo rm -rf /opt/app", "sh", "rm -r"),
    ("sudo -u root -E rm -rf /opt/app", "sh", "rm -r"),
    ("env A=1 B=2 rm -rf x", "sh", "rm -r"),
    ("FOO=bar rm -rf x", "sh", "rm -r"),
    ("nohup time nice -n 5 rm -rf x", "sh", "rm -r"),
    ("timeout 30 rm -rf x", "sh", "rm -r"),
    ("make test && rm -rf ~", "sh", "rm -r"),
    ("true; rm -rf ~", "sh", "rm -r"),
    ("false || rm -rf ~", "sh", "rm -r"),
    ("ls | xargs rm -rf", "sh", "rm -r"),
    ("find . -name '*.log' | xargs -I {} rm -rf {}", "sh", "rm -r"),
    ("find / -name core -delete", "sh", "find -delete"),
    ("find /tmp -exec rm -rf {} \\;", "sh", "rm -r"),
    ("for d in a b; do rm -rf $d; done", "sh", "rm -r"),
    ("sh -c 'rm -rf /'", "sh", "rm -r"),
    ('bash -lc "cd / && rm -rf etc"', "sh", "rm -r"),
    ("eval 'rm -rf ~'", "sh", "rm -r"),
    ("echo $(rm -rf /)", "sh", "rm -r"),
    ('echo "$(rm -rf /)"', "sh", "rm -r"),
    ("echo `rm -rf /`", "sh", "rm -r"),
    ("echo 'rm -rf /' | sh", "sh", "rm -r"),
    ("ssh build-host rm -rf /srv", "sh", "rm -r"),
    ("rm -rf 'an open quote", "sh", "rm -r"),
    ("R=rm; $R -rf ~", "sh", "rm -r"),
    ("export X='rm -rf'; ${X} ~", "sh", "rm -r"),
    ('echo "unclosed; rm -rf ~', "sh", "rm -r"),
    ("'rm' -rf 'x", "sh", "rm -r"),
    ("git push --force", "sh", "force push"),
    ("git push -f origin main", "sh", "force push"),
    ("git push -fu origin main", "sh", "force push"),
    ("git push origin +main", "sh", "force push"),
    ("git push --force-with-lease origin main", "sh", "force push"),
    ("git -C sub push --force", "sh", "force push"),
    ("git push origin --delete release", "sh", "deletes remote"),
    ("git push origin :release", "sh", "deletes a remote"),
    ("git clean -fdx", "sh", "git clean -x"),
    ("git -C /home/me/other reset --hard", "sh", "outside the work tree"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "sh", "dd of=/dev/sda"),
    ("mkfs.ext4 /dev/sdb1", "sh", "formats"),
    ("mkfs -t xfs /dev/nvme0n1", "sh", "formats"),
    ("echo 0 > /dev/sda", "sh", "/dev/sda"),
    ("cat image.bin > /dev/nvme0n1", "sh", "/dev/nvme0n1"),
    ("fdisk /dev/sda", "sh", "partitions"),
    ("parted /dev/sda mklabel gpt", "sh", "partitions"),
    ("wipefs -a /dev/sdb", "sh", "wipefs"),
    ("shred -u secrets.txt", "sh", "shred"),
    ("truncate -s 0 /var/log/syslog", "sh", "truncate"),
    ("chmod -R 777 /etc", "sh", "chmod"),
    ("chown -R nobody ~/", "sh", "chmod/chown"),
    ("systemctl stop nginx", "sh", "systemctl stop"),
    ("sudo systemctl disable --now sshd", "sh", "systemctl disable"),
    ("systemctl --user mask pipewire", "sh", "systemctl mask"),
    ("launchctl unload ~/Library/LaunchAgents/x.plist", "sh", "launchctl unload"),
    ("launchctl bootout gui/501/com.x", "sh", "launchctl bootout"),
    ("service postgresql stop", "sh", "service"),
    ("apt-get remove -y nginx", "sh", "apt-get remove"),
    ("sudo apt purge nginx", "sh", "apt purge"),
    ("dnf remove httpd", "sh", "dnf remove"),
    ("yum -y remove httpd", "sh", "yum remove"),
    ("pip uninstall -y requests", "sh", "pip uninstall"),
    ("python3 -m pip uninstall -y requests", "sh", "pip uninstall"),
    ("python3.12 -m pip uninstall -y requests", "sh", "pip uninstall"),
    ("pip3.12 uninstall requests", "sh", "pip uninstall"),
    ("npm uninstall -g typescript", "sh", "npm uninstall -g"),
    ("brew uninstall node", "sh", "brew uninstall"),
    ("psql -c 'DROP TABLE users'", "sh", "DROP TABLE"),
    ("psql -d app -c 'drop database app'", "sh", "DROP DATABASE"),
    ('mysql -u root -e "TRUNCATE orders"', "sh", "TRUNCATE"),
    ("echo 'Drop Table x;' | psql", "sh", "DROP TABLE"),
    ("sqlite3 app.db 'DROP INDEX i'", "sh", "DROP INDEX"),
    ("docker system prune -af", "sh", "docker system prune"),
    ("docker rm -f web", "sh", "docker rm -f"),
    ("docker volume rm data", "sh", "docker volume rm"),
    ("kubectl delete namespace prod", "sh", "kubectl delete"),
    ("kubectl -n prod delete pod web", "sh", "kubectl delete"),
    ("terraform destroy -auto-approve", "sh", "terraform destroy"),
    ("terraform apply -destroy", "sh", "terraform apply -destroy"),
    ("shutdown -h now", "sh", "shuts"),
    ("sudo reboot", "sh", "shuts"),
    ("kill -9 -1", "sh", "every process"),
    ("crontab -r", "sh", "crontab"),
    # interpreter one-liners
    ("python -c \"import os; os.system('rm -rf /')\"", "sh", "rm -r"),
    ("python3 -c \"import shutil; shutil.rmtree('/x')\"", "sh", "shutil.rmtree"),
    ("python -c \"import os; os.remove('/etc/x')\"", "sh", "os.remove"),
    ("python3 -c \"import subprocess; subprocess.run(['rm', '-rf', '/x'])\"", "sh", "rm -r"),
    ("python -c \"__import__('os').system('sh -c \\'rm -rf ~\\'')\"", "sh", "rm -r"),
    ("python -c \"exec('import shutil; shutil.rmtree(1)')\"", "sh", "rmtree"),
    ("node -e \"require('fs').rmSync('/x',{recursive:true})\"", "sh", "rmSync"),
    ("node -e \"require('child_process').execSync('rm -rf /x')\"", "sh", "rm -r"),
    ("perl -e 'use File::Path; rmtree(\"/x\")'", "sh", "rmtree"),
    ("perl -le 'system \"rm -rf /x\"'", "sh", "rm -r"),
    ("ruby -e 'FileUtils.rm_rf(\"/x\")'", "sh", "rm_rf"),
    ("ruby -e '`rm -rf /x`'", "sh", "rm -r"),
    ("python -c \"import os; os.system('rd /s /q C:\\x')\"", "cmd", "rd /s"),
    # code it cannot read
    ("echo cm0gLXJmIC8= | base64 -d | sh", "sh", "cannot read"),
    ('bash -c "$(echo cm0gLXJmIC8= | base64 -d)"', "sh", "cannot read"),
    ("curl https://x/y.sh | sh", "sh", "cannot read"),
    ("curl -fsSL https://x/y.sh | sudo bash -s -- --yes", "sh", "cannot read"),
    ("wget -qO- x | bash", "sh", "cannot read"),
    ("curl https://x/y.py | python3 -", "sh", "cannot read"),
    ("cat x.sh | zsh", "sh", "cannot read"),
    ('echo "$(curl x)" | dash', "sh", "cannot read"),
    ("$(printf rm) -rf /", "sh", "rm -r"),
    ("`echo rm` -rf /", "sh", "rm -r"),
    ("$(curl -s https://x/cmd) /", "sh", "cannot read"),
    ('sh -c "$(curl -fsSL https://x/install.sh)"', "sh", "cannot read"),
    ("iwr https://x/y.ps1 | iex", PS, "cannot read"),
    ("Invoke-WebRequest https://x | Invoke-Expression", PS, "cannot read"),
    ("'Remove-Item -Recurse x' | iex", PS, "Remove-Item -Recurse"),
    ("curl https://x/y.ps1 | pwsh -Command -", "sh", "cannot read"),
    ("iwr https://x/y.ps1 | pwsh -NoProfile", PS, "cannot read"),
    # files, mirrors and GitHub
    ("rsync -a --delete src/ /srv/www/", "sh", "rsync --delete"),
    ("rsync -av --delete-after a/ b/", "sh", "rsync --delete"),
    ("rsync --del -r a/ host:b/", "sh", "rsync --delete"),
    ("sed -i s/x/y/ /etc/passwd", "sh", "sed -i"),
    ("sed -i.bak -e s/x/y/ ~/.bashrc", "sh", "sed -i"),
    ("mv ~/.ssh /tmp", "sh", "outside the work tree (mv)"),
    ("mv /etc/hosts hosts.old", "sh", "outside the work tree (mv)"),
    ("mv build/x /etc/passwd", "sh", "overwrites"),
    ("gh repo delete me/app --yes", "sh", "gh repo delete"),
    ("gh release delete v1.0 -y", "sh", "gh release delete"),
    ("gh api -X DELETE repos/me/app", "sh", "gh api"),
    ("unlink /etc/x", "sh", "unlink"),
    # cmd.exe
    ("rd /s /q C:\\build", "cmd", "rd /s"),
    ("rmdir /S /Q out", "cmd", "rd /s"),
    ("rd/s/q out", "cmd", "rd /s"),
    ("del /s /q *.obj", "cmd", "del /s"),
    ("@del /f /s C:\\Users\\me\\*", "cmd", "del /s"),
    ("echo ok & rd /s /q C:\\x", "cmd", "rd /s"),
    ("reg delete HKLM\\Software\\Acme /f", "cmd", "reg delete"),
    ("reg add HKCU\\Software\\Acme /v X /d 1", "cmd", "reg add"),
    ("C:\\Windows\\System32\\reg.exe import x.reg", "cmd", "reg import"),
    ("sc delete AcmeSvc", "cmd", "sc delete"),
    ("sc.exe config AcmeSvc start= disabled", "cmd", "sc config"),
    ("sc \\\\server stop AcmeSvc", "cmd", "sc stop"),
    ("schtasks /Delete /TN nightly /F", "cmd", "schtasks"),
    ("net stop wuauserv", "cmd", "net stop"),
    ("format D: /FS:NTFS /Q", "cmd", "formats"),
    ("C:\\Windows\\System32\\format.com D: /Q", "cmd", "formats"),
    ("diskpart /s wipe.txt", "cmd", "partitions"),
    ("choco uninstall -y git", "cmd", "choco uninstall"),
    ("winget uninstall Git.Git", "cmd", "winget uninstall"),
    ("msiexec /x {GUID} /qn", "cmd", "msiexec"),
    ("cmd /c rd /s /q C:\\x", "cmd", "rd /s"),
    ("set R=rd && %R% /s /q C:\\x", "cmd", "rd /s"),
    ("if exist C:\\x rd /s /q C:\\x", "cmd", "rd /s"),
    ("for /d %i in (*) do rd /s /q %i", "cmd", "rd /s"),
    ('cmd.exe /C "rd /s /q C:\\x"', "cmd", "rd /s"),
    ("shutdown /s /t 0", "cmd", "shuts"),
    ("vssadmin delete shadows /all /quiet", "cmd", "shadow"),
    ("cipher /w:C:\\", "cmd", "cipher /w"),
    ('sqlcmd -Q "DROP DATABASE app"', "cmd", "DROP DATABASE"),
    # PowerShell
    ("Remove-Item -Recurse -Force C:\\build", PS, "Remove-Item -Recurse"),
    ("Remove-Item C:\\x -r", PS, "Remove-Item -Recurse"),
    ("ri -Recurse x", PS, "Remove-Item -Recurse"),
    ("rm -Recurse -Force ~\\x", PS, "rm -r"),
    ("ls -r | rm -Force", PS, "Get-ChildItem -Recurse"),
    ("Get-ChildItem C:\\ -Recurse | Remove-Item -Force", PS, "Get-ChildItem -Recurse"),
    ("Remove-Item HKLM:\\Software\\Acme", PS, "registry"),
    ("Set-ItemProperty -Path HKCU:\\Software\\Acme -Name X -Value 1", PS, "registry"),
    ("Stop-Service -Name Spooler", PS, "stop-service"),
    ("Set-Service Spooler -StartupType Disabled", PS, "set-service"),
    ("Unregister-ScheduledTask -TaskName nightly -Confirm:$false", PS, "scheduled task"),
    ("Uninstall-Package Git", PS, "package removal"),
    ("Format-Volume -DriveLetter D", PS, "formats"),
    ("Clear-Disk -Number 1 -RemoveData", PS, "formats"),
    ("Stop-Computer -Force", PS, "shuts"),
    ("Write-Host ok; Remove-Item -Recurse x", PS, "Remove-Item -Recurse"),
    ("$c = 'Remove-Item'; & $c -Recurse C:\\x", PS, "Remove-Item -Recurse"),
    ("& 'C:\\tools\\rm.exe' -rf x", PS, "rm -r"),
    ("Invoke-Expression 'Remove-Item -Recurse x'", PS, "Remove-Item -Recurse"),
    ('powershell -NoProfile -Command "Remove-Item -Recurse C:\\x"', "cmd", "Remove-Item"),
    ('pwsh -c "Stop-Service Spooler"', "sh", "stop-service"),
    ('powershell -ep Bypass -c "Remove-Item -r -fo x"', "cmd", "Remove-Item -Recurse"),
    ('powershell -Unknown v -c "Remove-Item -r x"', "cmd", "Remove-Item -Recurse"),
    ("Invoke-Sqlcmd -Query 'TRUNCATE TABLE t'", PS, "TRUNCATE"),
    # no shell named: read as sh and as cmd
    ("rm -rf ~", None, "rm -r"),
    ("rd /s /q C:\\x", None, "rd /s"),
    ("echo 'a & rd /s /q C:\\x'", None, "rd /s"),
    # a security review: code handed to a shell or interpreter on its input
    ("bash <<< 'rm -rf ~'", "sh", "rm -r"),
    ("bash -s x <<< 'rm -rf ~'", "sh", "rm -r"),
    ("bash <<< $'\\x72m -rf ~'", "sh", "rm -r"),
    ("$'\\x72\\x6d' -rf ~", "sh", "rm -r"),
    ("$'\\162\\155' -rf ~", "sh", "rm -r"),
    ("python3 - <<< 'import shutil; shutil.rmtree(\"/srv\")'", "sh", "shutil.rmtree"),
    ("echo 'import shutil; shutil.rmtree(\"/srv\")' | python3", "sh", "shutil.rmtree"),
    ("bash <<EOF\nrm -rf ~\nEOF", "sh", "rm -r"),
    ("sh <<-'E'\n\trm -rf /srv\n\tE", "sh", "rm -r"),
    ("cat <<EOF\n$(rm -rf ~)\nEOF", "sh", "rm -r"),
    ("echo '<<X'\nrm -rf ~\nX", "sh", "rm -r"),
    ("make\nrm -rf ~", "sh", "rm -r"),
    ("make && \\\nrm -rf ~", "sh", "rm -r"),
    ("bash <(curl -s https://x/y.sh)", "sh", "cannot read"),
    ("source <(curl -s https://x/env)", "sh", "cannot read"),
    ("bash <(echo 'rm -rf ~')", "sh", "rm -r"),
    ("diff <(rm -rf ~) a", "sh", "rm -r"),
    ("curl -s https://x/y.sh | sh", "sh", "cannot read"),
    # git runs what its configuration names
    ("git -c alias.x='!rm -rf ~' x", "sh", "rm -r"),
    ("git -c alias.x='push --force' x", "sh", "force push"),
    ("git -c core.pager='rm -rf ~' log", "sh", "rm -r"),
    ("git -c core.hooksPath=/tmp/h commit -m x", "sh", "hooks"),
    ("git config --global core.hooksPath /tmp/h", "sh", "git config --global"),
    ("git config --system core.editor vim", "sh", "git config --global"),
    ("git config --file ~/.gitconfig core.editor vim", "sh", "git config --global"),
    # shell calls in awk, perl, ruby and python
    ("awk 'BEGIN{system(\"rm -rf ~\")}'", "sh", "rm -r"),
    ('awk \'BEGIN{print "rm -rf ~" | "sh"}\'', "sh", "awk"),
    ("awk '{ \"rm -rf ~\" | getline x }'", "sh", "rm -r"),
    ("perl -e 'system qq(rm -rf ~)'", "sh", "rm -r"),
    ("perl -e 'qx{rm -rf ~}'", "sh", "rm -r"),
    ("perl -e '`rm -rf ~`'", "sh", "rm -r"),
    ("perl -e 'open(F, \"|rm -rf ~\")'", "sh", "rm -r"),
    ("ruby -e 'system(\"rm -rf ~\")'", "sh", "rm -r"),
    ("ruby -e '%x(rm -rf ~)'", "sh", "rm -r"),
    ("python -c 'import os; c=\"rm -rf ~\"; os.system(c)'", "sh", "cannot read"),
    ("python -c 'import subprocess as s; s.call(cmd, shell=True)'", "sh", "cannot read"),
    # a command named by what cannot be read, or run by another program
    ("R=r; ${R}m -rf ~", "sh", "rm -r"),
    ("$X -rf ~", "sh", "variable"),
    ("${X} -rf ~", "sh", "variable"),
    ("X=$(printf rm); $X -rf ~", "sh", "variable"),
    ("for c in rm; do $c -rf ~; done", "sh", "variable"),
    ("watch -n1 rm -rf ~", "sh", "rm -r"),
    ("watch 'rm -rf ~'", "sh", "rm -r"),
    ("env -S 'rm -rf /srv'", "sh", "rm -r"),
    ("find ~ -exec rm -f {} +", "sh", "removal outside"),
    ("find / -name '*.log' -exec rm {} ;", "sh", "removal outside"),
    ("npx rimraf /srv", "sh", "rimraf"),
    ("npm exec rimraf dist", "sh", "rimraf"),
    ("npx -c 'rm -rf ~'", "sh", "rm -r"),
    # writing files outside the work tree
    ("echo x > ~/.bashrc", "sh", "overwrites ~/.bashrc"),
    ("printf '' > $HOME/.ssh/authorized_keys", "sh", "overwrites $HOME/.ssh"),
    ("echo key >> ~/.ssh/authorized_keys", "sh", "overwrites ~/.ssh"),
    ("echo x >| ~/.bashrc", "sh", "overwrites ~/.bashrc"),
    ("echo x > ../../other/file", "sh", "overwrites"),
    ("tee -a ~/.bashrc", "sh", "tee"),
    ("dd if=/dev/zero of=$HOME/.bashrc", "sh", "dd of="),
    ("mv build ~/.ssh", "sh", "(mv)"),
    ("cp -r evil/. ~/", "sh", "(cp)"),
    ("cp x $HOME/.profile", "sh", "(cp)"),
    ("ln -sf evil ~/.bashrc", "sh", "(ln)"),
    ("install -m 755 tool /usr/local/bin/tool", "sh", "(install)"),
    ("tar xf evil.tar -C /", "sh", "tar -C"),
    ("tar -xzf evil.tgz --directory=$HOME", "sh", "tar -C"),
    ("tar -xPf evil.tar", "sh", "tar -P"),
    ("unzip evil.zip -d ~", "sh", "unzip -d"),
    # firewall and accounts
    ("iptables -F", "sh", "firewall"),
    ("ip6tables -P INPUT DROP", "sh", "firewall"),
    ("nft flush ruleset", "sh", "firewall"),
    ("ufw disable", "sh", "firewall"),
    ("userdel bob", "sh", "account"),
    ("useradd -m eve", "sh", "account"),
    ("passwd root", "sh", "account"),
]

NOT_DESTRUCTIVE: list[tuple[str, str | None]] = [
    ("rm file.txt", "sh"),
    ("rm -f build/out.o", "sh"),
    ("rm -v *.tmp", "sh"),
    ("rmdir empty", "sh"),
    ("git push", "sh"),
    ("git push origin main", "sh"),
    ("git push --follow-tags origin main", "sh"),
    ("git reset --hard", "sh"),
    ("git reset --hard origin/main", "sh"),
    ("git clean -fd", "sh"),
    ("git commit -am 'rm -rf the old cache'", "sh"),
    ("pip install -r requirements.txt", "sh"),
    ("python -m pip install -U pip", "sh"),
    ("npm uninstall left-pad", "sh"),
    ("npm ci && npm test", "sh"),
    ("echo rm -rf", "sh"),
    ('echo "rm -rf /"', "sh"),
    ("echo 'x; rm -rf /'", "sh"),
    ("printf '%s\\n' 'DROP TABLE users'", "sh"),
    ("grep DROP schema.sql", "sh"),
    ("grep -rn 'rm -rf' scripts/", "sh"),
    ("psql -c 'SELECT * FROM drops'", "sh"),
    ("dd if=/dev/sda of=disk.img", "sh"),
    ("dd if=/dev/zero of=/dev/null count=1", "sh"),
    ("echo x > /dev/shm/cache && rmdir /s/empty", "sh"),
    ("chmod -R 755 build", "sh"),
    ("chmod 600 /etc/app.conf", "sh"),
    ("cat /etc/hosts", "sh"),
    ("echo hi > out.txt 2>&1", "sh"),
    ("make -j4 > build.log", "sh"),
    ("systemctl status nginx", "sh"),
    ("fdisk -l", "sh"),
    ("wipefs /dev/sdb", "sh"),
    ("kill -9 12345", "sh"),
    ("kill -1 12345", "sh"),
    ("docker rm web", "sh"),
    ("docker build -t x .", "sh"),
    ("kubectl get pods -n prod", "sh"),
    ("terraform plan", "sh"),
    ("service nginx status", "sh"),
    ("find . -name '*.py' -print", "sh"),
    ("sh -c 'make test'", "sh"),
    ("ssh host uptime", "sh"),
    ("cmake --build . --target clean", "sh"),
    ("tools/format --check src", "sh"),
    ("make format", "sh"),
    ("del build\\out.obj", "cmd"),
    ("rd build\\empty", "cmd"),
    ("echo rd /s /q C:\\x", "cmd"),
    ("dir /s C:\\src", "cmd"),
    ("reg query HKLM\\Software\\Acme", "cmd"),
    ("sc query AcmeSvc", "cmd"),
    ("schtasks /Query", "cmd"),
    ("echo a; rd /s /q x", "cmd"),
    ("if exist build\\out.obj del build\\out.obj", "cmd"),
    ("Remove-Item build\\out.obj", PS),
    ("rm -Force build\\out.obj", PS),
    ("ls -rt | rm -f", "sh"),
    ("Get-ChildItem -Recurse | Select-Object Name", PS),
    ("Get-Service Spooler", PS),
    ("Format-Table -AutoSize", PS),
    ("Write-Host 'Remove-Item -Recurse C:\\'", PS),
    ("Get-ItemProperty HKLM:\\Software\\Acme", PS),
    ("dotnet build -c Release", PS),
    ("python -V", None),
    ("python3.12 -m pip install -e .", "sh"),
    ("pipenv --rm", "sh"),
    ("PY=python3; $PY -m pytest -x", "sh"),
    ("go test ./...", None),
    ('python -c "print(1)"', "sh"),
    ('python -c "print(1)"', None),
    ("python3 -c \"import subprocess; subprocess.run(['make', 'test'])\"", "sh"),
    ('python3 -c "import os; print(os.getcwd())"', "sh"),
    ("python -m json.tool < data.json", "sh"),
    ("cat data.json | python3 -m json.tool", "sh"),
    ("git log | perl -ne 'print if /fix/'", "sh"),
    ('node -e "console.log(1)"', "sh"),
    ("ruby -e 'puts 1'", "sh"),
    ("curl -o out.txt https://x", "sh"),
    ("curl -fsSL https://x/y.sh -o y.sh && sh y.sh", "sh"),
    ("echo 'make test' | sh", "sh"),
    ("sed -i s/a/b/ src/file.txt", "sh"),
    ("sed -n 1,5p /etc/hosts", "sh"),
    ("sed s/a/b/ /etc/hosts > hosts.txt", "sh"),
    ("mv build/a build/b", "sh"),
    ("rsync -a src/ dst/", "sh"),
    ("gh release create v1.0", "sh"),
    ("gh repo view me/app", "sh"),
    ("unlink build/link", "sh"),
    ('echo "$(date)"', "sh"),
    ("X=$(git rev-parse HEAD); echo $X", "sh"),
    ('"$(git rev-parse --show-toplevel)/tools/build.sh"', "sh"),
    ("$(which python3) -m pytest -x", "sh"),
    ("for f in $(ls); do wc -l $f; done", "sh"),
    ("echo `date`", "sh"),
    ("Get-Content a.txt | pwsh -File tools/check.ps1", PS),
    # the programs of the review's cases doing ordinary work
    ("python3 - <<< 'print(1)'", "sh"),
    ("bash <<< 'make test'", "sh"),
    ("printf $'a\\tb\\n' > out.txt", "sh"),
    ("cat <<EOF > notes.txt\nhello $(date)\nEOF", "sh"),
    ("make\npytest -x", "sh"),
    ("cmake --build build", "sh"),
    ("bash <(echo 'make test')", "sh"),
    ("diff <(sort a) <(sort b)", "sh"),
    ("git -c core.pager=cat log", "sh"),
    ("git -c alias.co=checkout co main", "sh"),
    ("git config user.name x", "sh"),
    ("git config --global --get user.name", "sh"),
    ("awk -F, '{print $2}' data.csv", "sh"),
    ("awk 'BEGIN{system(\"make\")}'", "sh"),
    ('perl -e \'system("make") == 0 or die "x"\'', "sh"),
    ("ruby -e 'puts %w(a b)'", "sh"),
    ("python3 -c \"print(f'{1}')\"", "sh"),
    ("X=make; $X -j4", "sh"),
    ("R=r; ${R}m -f build/x.o", "sh"),
    ("watch -n 5 make", "sh"),
    ("env -S 'make test'", "sh"),
    ("find . -name '*.o' -exec rm {} +", "sh"),
    ("npx prettier --check .", "sh"),
    ("echo hi > out.txt", "sh"),
    ("echo x > /tmp/out.txt", "sh"),
    ("make 2>&1 | tee build.log", "sh"),
    ("cp a b", "sh"),
    ("cp -r src/. build/", "sh"),
    ("ln -s /usr/bin/python3 build/py", "sh"),
    ("tar -xf deps.tar -C build", "sh"),
    ("tar -C / -czf /tmp/out.tgz etc", "sh"),
    ("unzip deps.zip -d build", "sh"),
    ("iptables -L -n", "sh"),
    ("nft list ruleset", "sh"),
    ("passwd -S bob", "sh"),
]


@pytest.mark.parametrize(("step", "shell", "why"), DESTRUCTIVE)
def test_a_step_that_destroys_is_destructive(step: str, shell: str | None, why: str) -> None:
    reason = classify(step, shell=shell)
    assert reason is not None, step
    assert why.lower() in reason.lower(), (step, reason)


@pytest.mark.parametrize(("step", "shell"), NOT_DESTRUCTIVE)
def test_work_inside_the_work_tree_and_data_are_not(step: str, shell: str | None) -> None:
    assert classify(step, shell=shell) is None


def test_the_tables_are_wide_enough() -> None:
    shells = {s for _, s, _ in DESTRUCTIVE}
    assert len(DESTRUCTIVE) >= 60 and len(NOT_DESTRUCTIVE) >= 40
    assert {"sh", "cmd", PS} <= shells and {"sh", "cmd", PS} <= {s for _, s in NOT_DESTRUCTIVE}


def test_an_encoded_powershell_command_is_decoded_and_read() -> None:
    encoded = base64.b64encode("Remove-Item -Recurse C:\\x".encode("utf-16-le")).decode()
    assert "Remove-Item" in (classify(f"powershell -EncodedCommand {encoded}", shell=PS) or "")
    harmless = base64.b64encode(b"W\x00r\x00i\x00t\x00e\x00").decode()
    assert classify(f"pwsh -enc {harmless}", shell=PS) is None


def test_the_shared_scopes_own_list_is_destructive_too() -> None:
    extra = ("./deploy.sh", "make release")
    assert "./deploy.sh" in (classify("./deploy.sh --prod", extra, shell="sh") or "")
    assert classify("bash scripts/deploy.sh", extra, shell="sh") is not None
    assert classify("sudo /srv/app/deploy.sh", extra, shell="sh") is not None
    assert "make release" in (classify("make -j4 release", extra, shell="sh") or "")
    assert classify("make test && make release", extra, shell="sh") is not None
    assert classify("make test", extra, shell="sh") is None
    assert classify("./deploy.sh", (), shell="sh") is None
    assert classify("tools\\deploy.cmd prod", ("C:\\ci\\deploy.cmd",), shell="cmd") is not None


def test_a_task_names_its_first_destructive_step() -> None:
    task = TaskMsg(
        issue=1,
        node="mac",
        task=1,
        objective="o",
        steps=("make", "echo rm -rf", "rd /s /q out", "rm -rf /"),
        scope="build",
        shell="cmd",
    )
    assert task_destructive(task) == (3, "recursive removal (rd /s)")
    assert task_destructive(task.model_copy(update={"steps": ("make",)})) is None
    listed = task.model_copy(update={"steps": ("make", "make release")})
    assert task_destructive(listed, ("make release",)) == (
        2,
        "listed as destructive in the shared scope (make release)",
    )


def test_code_nested_past_reading_is_treated_as_destructive() -> None:
    step = "eval " * 6 + "true"
    assert classify(step, shell="sh") == TOO_COMPLEX


_STEP_CHARS = st.sampled_from([*"rm -f/\\'\"`$()&|;<>{}^:=.~*%@ \t", "sh -c ", "eval "])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=1000), st.lists(_STEP_CHARS, max_size=400).map("".join)))
def test_classify_never_raises_on_any_step(step: str) -> None:
    """(How fast the worst steps are read is measured by bench/bench_classify.py.)"""
    step = step[:1000]
    for shell in (None, "sh", "cmd", "powershell"):
        reason = classify.__wrapped__(step, shell=shell)
        assert reason is None or isinstance(reason, str)


def test_the_worst_steps_of_1000_characters_are_read_without_error() -> None:
    """Deep nesting is refused as too complex, never read into a recursion error; the
    time each takes is bench/bench_classify.py's (a wall-clock limit here failed under
    load without saying anything about relay)."""
    from bench.bench_classify import SHELLS, WORST

    refused = 0
    for step in WORST:
        for shell in SHELLS:
            reason = classify.__wrapped__(step[:1000], shell=shell)
            assert reason is None or isinstance(reason, str), step[:40]
            refused += reason is not None
    assert classify.__wrapped__("eval " * 200, shell="sh") == TOO_COMPLEX
    assert classify.__wrapped__("powershell -c " * 71, shell="powershell") == TOO_COMPLEX
    assert refused >= 20  # the nested and remote-code steps are refused for every shell
